"""The decision (SPEC D1-D5): matrix arithmetic by hand, every stop factor triggered and
cleared, robustness against a brute-force reference, the CLI interface."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.cli import app
from gpudecide.decision import matrix, robustness
from gpudecide.decision.assess import assess
from gpudecide.errors import InputError
from gpudecide.findings import Suggestion
from gpudecide.matrix_config import MatrixConfig

OPTIONS = [
    {"id": "own", "kind": "owned", "sites": [{"roles": ["storage"], "country": "KZ"}]},
    {"id": "man", "kind": "managed", "sites": [{"roles": ["storage"], "country": "DE"}]},
    {"id": "loc", "kind": "managed", "sites": [{"roles": ["storage"], "country": "KZ"}]},
]
CRITERIA = [
    {"id": "frequency", "weight": 2},
    {"id": "artifacts", "weight": 5},
    {"id": "cost", "weight": 3},
]


def make_ws(root: Path, **matrix_extra: Any) -> workspace.Workspace:
    """A workspace with three options, three criteria and the given matrix settings."""
    workspace.init(root)
    config = yaml.safe_load((root / workspace.CONFIG_NAME).read_text())
    config["options"] = OPTIONS
    config["matrix"] = {"criteria": CRITERIA, **matrix_extra}
    (root / workspace.CONFIG_NAME).write_text(yaml.safe_dump(config, sort_keys=False))
    return workspace.load(root)


def record(kind: str, figures: dict[str, Any]) -> ev.Evidence:
    return ev.seal(
        ev.Evidence(
            kind=kind, title=kind, spec_ids=[], verdict="info", summary=kind, figures=figures
        )
    )


def cost_record(totals: dict[str, str]) -> ev.Evidence:
    """A cost record with normal-month totals (no peak checks)."""
    return record(
        "cost",
        {
            "currency": "KZT",
            "options": [
                {"id": oid, "regimes": {"normal": {"total": t, "useful_utilisation": None}}}
                for oid, t in totals.items()
            ],
        },
    )


def audit_record(option: str, hazards: list[dict[str, str]]) -> ev.Evidence:
    return record("audit", {"option": option, "hazards": hazards, "resumable": True})


# --- matrix arithmetic ------------------------------------------------------------------


def test_weighted_totals_by_hand() -> None:
    cells = {
        "a": {"x": matrix.Cell(5, "evidence"), "y": matrix.Cell(1, "evidence")},
        "b": {"x": matrix.Cell(2, "evidence"), "y": matrix.Cell(4, "evidence")},
    }
    # a: (3*5 + 1*1) / 4 = 4.0 -> (4-1)/4*100 = 75; b: (3*2 + 1*4) / 4 = 2.5 -> 37.5
    assert matrix.weighted_totals(cells, {"x": 3, "y": 1}) == {"a": 75.0, "b": 37.5}
    # equal weights: a 3.0 -> 50, b 3.0 -> 50: a tie, stated as a tie
    totals = matrix.weighted_totals(cells, {"x": 1, "y": 1})
    assert totals == {"a": 50.0, "b": 50.0}
    assert matrix.ranking(totals) == [["a", "b"]]


def test_evidence_cell_takes_the_lowest_suggestion_and_every_rule() -> None:
    cell = matrix.evidence_cell(
        [
            Suggestion("a", "x", 4, "rule four", ("e1",)),
            Suggestion("a", "x", 2, "rule two", ("e2", "e1")),
        ]
    )
    assert (cell.score, cell.source, cell.evidence) == (2, "evidence", ["e1", "e2"])
    assert cell.rule == "rule two; rule four"


def test_assess_scores_totals_and_assumptions(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    # cost: own 100 (1.0x: 5), man 120 (1.2x: 4), loc 250 (2.5x: 2)
    records = [cost_record({"own": "100", "man": "120", "loc": "250"})]
    result = assess(ws, records)
    rows = {o["id"]: o for o in result.options}
    assert {o: rows[o]["scores"]["cost"]["score"] for o in rows} == {"own": 5, "man": 4, "loc": 2}
    assert rows["own"]["scores"]["cost"]["evidence"] == [records[0].id]
    # frequency and artifacts have no evidence: assumptions scored 3, counted (2 x 3 options)
    assert rows["own"]["scores"]["artifacts"]["source"] == "assumption"
    assert result.assumptions == 6
    # own: (2*3 + 5*3 + 3*5)/10 = 3.6 -> 65; man: 3.3 -> 57.5; loc: 2.7 -> 42.5
    assert [rows[o]["total"] for o in ("own", "man", "loc")] == [65.0, 57.5, 42.5]
    # The assumed artifacts cells (weight 5) could turn it: only provisional, and said so.
    assert result.status == "provisional" and result.leading == "own"
    assert result.recommended is None
    assert [rows[o]["rank"] for o in ("own", "man", "loc")] == [1, 2, 3]
    assert result.assumptions_decide is True
    assert result.summary.startswith("provisional: own leads (65/100)")
    bounds = result.robustness["bounds"]
    # own at worst: (2*1 + 5*1 + 3*5)/10 = 2.2 -> 30; man at best: (2*5 + 5*5 + 3*4)/10 = 4.7
    assert bounds["winner_worst"] == 30.0 and bounds["best"]["man"] == 92.5
    assert bounds["contenders"] == ["loc", "man"]


def test_assumptions_do_not_decide_a_clear_lead(tmp_path: Path) -> None:
    ws = make_ws(
        tmp_path,
        scores=[
            {"option": o, "criterion": c, "score": s, "source": "override", "justification": "j"}
            for o, s in (("own", 5), ("man", 1), ("loc", 1))
            for c in ("frequency", "artifacts")
        ],
    )
    result = assess(ws, [cost_record({"own": "100", "man": "100", "loc": "100"})])
    assert result.assumptions == 0 and result.assumptions_decide is False
    assert result.leading == "own" and result.robustness["bounds"]["settled"] is True
    # Still provisional: nothing of own's must-prove list is verified.
    assert result.status == "provisional"
    own = next(o for o in result.options if o["id"] == "own")
    assert {i["state"] for i in own["coverage"]} <= {"not_checked", "claimed"}


def test_override_keeps_the_suggestion_beside_it(tmp_path: Path) -> None:
    ws = make_ws(
        tmp_path,
        scores=[
            {
                "option": "loc",
                "criterion": "cost",
                "score": 4,
                "source": "override",
                "justification": "a discount is signed",
            }
        ],
    )
    result = assess(ws, [cost_record({"own": "100", "man": "120", "loc": "250"})])
    cell = next(o for o in result.options if o["id"] == "loc")["scores"]["cost"]
    assert (cell["score"], cell["source"], cell["suggested"]) == (4, "override", 2)
    assert cell["justification"] == "a discount is signed" and cell["evidence"]


def test_document_score_carries_the_file_hash(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir(parents=True)
    ws = make_ws(
        tmp_path,
        scores=[
            {
                "option": "man",
                "criterion": "artifacts",
                "score": 2,
                "source": "document",
                "justification": "the contract keeps optimizer state",
                "document": "docs/contract.txt",
                "excerpt": "Optimizer state is not exported.",
            }
        ],
    )
    (tmp_path / "docs" / "contract.txt").write_text("Optimizer state is not exported.\n")
    result = assess(ws, [])
    cell = next(o for o in result.options if o["id"] == "man")["scores"]["artifacts"]
    import hashlib

    digest = hashlib.sha256(b"Optimizer state is not exported.\n").hexdigest()
    assert cell["document"] == {
        "path": "docs/contract.txt",
        "sha256": digest,
        "excerpt": "Optimizer state is not exported.",
    }


# --- stop factors -----------------------------------------------------------------------


def _stops(result: Any, option: str) -> list[str]:
    return [s["id"] for s in next(o for o in result.options if o["id"] == option)["stop_factors"]]


def test_export_hazard_stops_whatever_the_total(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    cost = cost_record({"own": "300", "man": "100", "loc": "300"})  # man cheapest by far
    hazard = audit_record("man", [{"id": "dangerous_pickle", "path": "x.pkl"}])
    result = assess(ws, [cost, hazard])
    assert _stops(result, "man") == ["export_hazard"]
    stop = next(o for o in result.options if o["id"] == "man")["stop_factors"][0]
    assert stop["evidence"] == [hazard.id] and "dangerous_pickle" in stop["rule"]
    assert result.recommended != "man" and result.status == "tie"  # own and loc tie
    # Cleared: the same option audited without hazards.
    clean = audit_record("man", [])
    cleared = assess(ws, [cost, clean])
    assert _stops(cleared, "man") == [] and cleared.leading == "man"


def test_hard_slo_violated_conclusively_stops_the_option(tmp_path: Path) -> None:
    slo = {
        "name": "urgent",
        "verdict": "fail",
        "conclusive": True,
        "violation_share": 0.4,
        "ci95": [0.3, 0.5],
        "allowed_violation_share": 0.05,
    }
    queue = record("queue", {"option": "loc", "slo": [slo]})
    soft = make_ws(tmp_path / "soft")
    assert _stops(assess(soft, [queue]), "loc") == []  # not marked hard: no stop
    hard = make_ws(tmp_path / "hard", slo={"hard": ["urgent"]})
    assert _stops(assess(hard, [queue]), "loc") == ["hard_slo_violated"]
    # An inconclusive violation is no stop factor, hard or not.
    unsure = record("queue", {"option": "loc", "slo": [{**slo, "conclusive": False}]})
    assert _stops(assess(hard, [unsure]), "loc") == []


def test_unclear_rights_to_derived_weights_stop(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    ws.config.options[1].derived_weights = "unclear"
    result = assess(ws, [])
    assert _stops(result, "man") == ["derived_rights_unclear"]
    ws.config.options[1].derived_weights = "ours"
    assert _stops(assess(ws, []), "man") == []


def test_a_hybrid_inherits_its_contours_stop_factors(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    config = yaml.safe_load((tmp_path / workspace.CONFIG_NAME).read_text())
    config["options"].append({"id": "hyb", "kind": "hybrid", "contours": ["own", "man"]})
    (tmp_path / workspace.CONFIG_NAME).write_text(yaml.safe_dump(config))
    ws = workspace.load(tmp_path)
    result = assess(ws, [audit_record("man", [{"id": "unknown_format", "path": "v.bin"}])])
    assert _stops(result, "hyb") == ["export_hazard"]
    hyb = next(o for o in result.options if o["id"] == "hyb")
    assert "through its contour man" in hyb["stop_factors"][0]["rule"]


def test_when_every_option_is_stopped_the_cli_says_so_and_exits_1(tmp_path: Path) -> None:
    make_ws(tmp_path)
    config = yaml.safe_load((tmp_path / workspace.CONFIG_NAME).read_text())
    for o in config["options"]:
        o["derived_weights"] = "unclear"
    (tmp_path / workspace.CONFIG_NAME).write_text(yaml.safe_dump(config))
    result = CliRunner().invoke(app, ["assess", str(tmp_path), "--json"])
    assert result.exit_code == 1, result.output
    body = json.loads(result.stdout)
    assert body["decision"]["status"] == "no_option_passes"
    assert body["decision"]["recommended"] is None and body["decision"]["leading"] is None
    assert body["decision"]["summary"].startswith("no option passes its stop factors")
    assert all(o["stop_factors"] for o in body["options"])
    assert all(o["stop_factors"][-1]["clear"] for o in body["options"])
    assert Path(body["evidence"]).is_file()


def test_assess_json_interface(tmp_path: Path) -> None:
    make_ws(tmp_path)
    ev.write(cost_record({"own": "100", "man": "120", "loc": "250"}), tmp_path / "evidence")
    result = CliRunner().invoke(app, ["assess", str(tmp_path), "--json"])
    assert result.exit_code == 1, result.output  # provisional: no pass
    body = json.loads(result.stdout)
    assert body["decision"]["status"] == "provisional" and body["decision"]["next_actions"]
    assert set(body) >= {
        "decision",
        "options",
        "weights",
        "assumptions",
        "robustness",
        "conditions",
        "reversibility",
        "evidence",
    }
    option = body["options"][0]
    assert set(option) >= {
        "id",
        "kind",
        "sites",
        "stop_factors",
        "scores",
        "total",
        "rank",
        "coverage",
        "contour",
    }
    assert {i["id"] for i in option["coverage"]} >= {"export_proven", "node_loss_drilled"}
    assert set(option["scores"]["cost"]) >= {"score", "source", "evidence", "rule", "justification"}
    assert set(body["robustness"]) >= {
        "winner_share_pm1",
        "winner_share_dirichlet",
        "flip",
        "rank_reversals",
    }
    assert body["weights"] == {"frequency": 2, "artifacts": 5, "cost": 3}
    record = ev.load(Path(body["evidence"]))
    assert record.kind == "decision" and record.figures["decision"] == body["decision"]


def test_unknown_option_in_scores_names_file_line_and_field(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        make_ws(
            tmp_path,
            scores=[
                {
                    "option": "nope",
                    "criterion": "cost",
                    "score": 3,
                    "source": "override",
                    "justification": "j",
                }
            ],
        )
    assert err.value.field == "matrix.scores.0.option" and err.value.line is not None
    assert "unknown option id 'nope'" in err.value.message
    result = CliRunner().invoke(app, ["assess", str(tmp_path)])
    assert result.exit_code == 2
    assert f"{tmp_path / 'gpudecide.yaml'}:{err.value.line}" in result.stderr


def test_unknown_criterion_in_scores(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown criterion 'speed'") as err:
        make_ws(
            tmp_path,
            scores=[
                {
                    "option": "own",
                    "criterion": "speed",
                    "score": 3,
                    "source": "override",
                    "justification": "j",
                }
            ],
        )
    assert err.value.field == "matrix.scores.0.criterion"


# --- robustness -------------------------------------------------------------------------


def _brute_winner(scores: dict[str, list[int]], w: tuple[float, ...]) -> str | None:
    totals = {
        o: sum(wi * si for wi, si in zip(w, s, strict=True)) / sum(w) for o, s in scores.items()
    }
    best = max(totals.values())
    top = [o for o, t in totals.items() if abs(t - best) <= 1e-9]
    return top[0] if len(top) == 1 else None


@pytest.mark.parametrize("seed", range(6))
def test_robustness_matches_a_brute_force_reference(seed: int) -> None:
    rng = random.Random(seed)
    criteria = ["a", "b", "c", "d"]
    names = ["p", "q", "r"]
    scores = {o: [rng.randint(1, 5) for _ in criteria] for o in names}
    weights = {c: rng.randint(1, 5) for c in criteria}
    w0 = tuple(float(weights[c]) for c in criteria)
    winner = _brute_winner(scores, w0)
    result = robustness.analyse(
        {o: dict(zip(criteria, s, strict=True)) for o, s in scores.items()}, weights, names
    )
    assert result.winner == winner
    if winner is None:
        assert result.winner_share_pm1 is None
        return
    pm1 = [
        v for v in itertools.product(*[[x for x in (w - 1, w, w + 1) if 1 <= x <= 5] for w in w0])
    ]
    share = sum(_brute_winner(scores, v) == winner for v in pm1) / len(pm1)
    assert result.vectors_pm1 == len(pm1)
    assert result.winner_share_pm1 == pytest.approx(round(share, 4))
    grid = list(itertools.product(range(1, 6), repeat=4))
    gshare = sum(_brute_winner(scores, v) == winner for v in grid) / len(grid)
    assert result.winner_share_grid == pytest.approx(round(gshare, 4)) and not result.grid_sampled
    # The smallest single change that flips, by brute force over every criterion and weight.
    flips = []
    for i, w in enumerate(w0):
        for v in range(1, 6):
            trial = list(w0)
            trial[i] = v
            now = _brute_winner(scores, tuple(trial))
            if now != winner:
                flips.append((abs(v - w), i, v))
    if not flips:
        assert result.flip is None and result.verdict == "robust"
    else:
        change, i, v = min(flips)
        assert result.flip is not None
        assert (result.flip["change"], result.flip["criterion"], result.flip["new_weight"]) == (
            change,
            criteria[i],
            v,
        )
    assert (result.verdict == "robust") == (share == 1.0)


def test_grid_is_sampled_past_its_limit_and_reproducible() -> None:
    scores = {"p": dict.fromkeys("abcdefg", 4), "q": dict.fromkeys("abcdefg", 3)}
    weights = dict.fromkeys("abcdefg", 3)
    one = robustness.analyse(scores, weights, ["p", "q"])
    two = robustness.analyse(scores, weights, ["p", "q"])
    assert one.grid_sampled and one.vectors_grid == robustness.GRID_LIMIT
    assert one.as_dict() == two.as_dict()
    assert one.winner_share_grid == 1.0 and one.verdict == "robust"


def test_dirichlet_vectors_stay_near_the_weights() -> None:
    rng = np.random.default_rng(0)
    v = robustness.dirichlet_vectors([5, 1, 1], rng)
    mean = v.mean(axis=0)
    assert mean[0] == pytest.approx(5 / 7, abs=0.01) and mean[1] == pytest.approx(1 / 7, abs=0.01)


def test_matrix_config_default_lists_the_criteria() -> None:
    ids = [c.id for c in MatrixConfig().criteria]
    assert ids[:6] == ["frequency", "artifacts", "queue", "isolation", "operations", "scale"]


def test_audit_names_its_option_and_its_hazards_stop_it(tmp_path: Path) -> None:
    from gpudecide.artifacts.demo import DATA

    make_ws(tmp_path)
    export = DATA / "vendor-run-7"
    bad = CliRunner().invoke(app, ["audit", str(export), "-w", str(tmp_path), "--option", "x"])
    assert bad.exit_code == 2 and "unknown option id 'x'" in bad.stderr
    assert not list((tmp_path / "evidence").glob("audit-*.json"))  # nothing written
    run = CliRunner().invoke(
        app, ["audit", str(export), "-w", str(tmp_path), "--option", "man", "--json"]
    )
    assert run.exit_code == 1  # the vendor export has hazards
    assert json.loads(run.stdout)["option"] == "man"
    result = assess(workspace.load(tmp_path))
    assert set(_stops(result, "man")) == {"export_hazard"}
    assert _stops(result, "own") == [] and _stops(result, "loc") == []


def test_audits_of_two_options_both_count(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    first = audit_record("man", [{"id": "unknown_format", "path": "a.bin"}])
    second = ev.seal(audit_record("loc", [{"id": "dangerous_pickle", "path": "b.pkl"}]))
    result = assess(ws, [first, second])  # the newer audit is another option's
    assert _stops(result, "man") == ["export_hazard"]
    assert _stops(result, "loc") == ["export_hazard"]
    # A newer audit of the same option replaces the older one.
    fixed = audit_record("man", [])
    assert _stops(assess(ws, [first, second, fixed]), "man") == []


def _conditions(result: Any) -> dict[str, str]:
    return {c["id"]: c["state"] for c in result.conditions if c["option"] is None}


def test_conditions_from_standard_path_and_isolation(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    assert _conditions(assess(ws, []))["low_level_tuning"] == "unknown"

    def standard(**needs: bool) -> ev.Evidence:
        return record("standard_path", {"needs": needs, "options": [], "findings": []})

    kernels = standard(custom_kernels=True)
    states = _conditions(assess(ws, [kernels]))
    # Kernels are low-level tuning, but they ship inside a standard container.
    assert states["low_level_tuning"] == "true" and states["standard_container"] == "true"
    driver = standard(modified_driver=True)
    assert _conditions(assess(ws, [driver]))["standard_container"] == "false"
    plain = standard(custom_kernels=False)
    assert _conditions(assess(ws, [plain]))["low_level_tuning"] == "false"

    def row(option: str, stopped: bool) -> dict[str, Any]:
        return {"option": option, "stopped": stopped, "findings": [], "boundaries": []}

    both = [row("man", True), row("loc", True)]
    stopped = record("isolation", {"options": [*both, row("own", False)], "findings": []})
    assert _conditions(assess(ws, [stopped]))["control_plane"] == "true"
    one = record("isolation", {"options": [both[0], row("loc", False)], "findings": []})
    assert _conditions(assess(ws, [one]))["control_plane"] == "false"
