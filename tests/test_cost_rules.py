"""The decision rules of the cost evidence (gpudecide.cost.rules): the cost bands, and the
scale score from the peak check, which never reads a replay otherwise than the queue rule
reads the same replay (issue 22: "it scores queue 5 and scale 2 from one replay")."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.cost import analysis
from gpudecide.cost.regimes import from_profile
from gpudecide.cost.rules import SCALE_SCORES, cost_rules, peak_outcome
from gpudecide.decision.context import RuleContext
from gpudecide.decision.rules import rules_for
from gpudecide.findings import Suggestion
from gpudecide.i18n import speaking
from gpudecide.message import render
from gpudecide.queue.rules import replay_rules

from .english import english_runs
from .test_cost_fixtures import cfg, profile_figures, profile_record, replay_record
from .test_decision import make_ws, record


def _checked(concurrent: int, replay: ev.Evidence) -> ev.Evidence:
    """A cost record holding the peak check the analysis makes of the owned 4-GPU pool (the
    figures the rules read, without costing every month)."""
    c = cfg()
    figures = profile_figures()
    figures["series"]["concurrency"]["gpus"][21] = concurrent
    peak = from_profile(figures, c.hours_per_month).peak
    check = analysis.peak_check(c, c.owned[0], peak, [replay])
    own = {"id": "own", "regimes": {"normal": {"total": "100"}}, "peak_check": check}
    return record("cost", {"currency": "KZT", "options": [own]})


def _cost(concurrent: int, replays: list[ev.Evidence]) -> ev.Evidence:
    """A real cost record of the fixture options; the peak month has `concurrent` GPUs in use
    at once on the owned 4-GPU pool."""
    figures = profile_figures()
    figures["series"]["concurrency"]["gpus"][21] = concurrent
    result = analysis.analyse(cfg(), profile_record(figures), replays)
    return ev.seal(analysis.to_evidence(result, []))


@pytest.fixture(scope="module")
def declared(tmp_path_factory: pytest.TempPathFactory) -> workspace.Workspace:
    """The decision's test workspace: options own (owned), man and loc (managed)."""
    return make_ws(tmp_path_factory.mktemp("decl"), slo={"hard": []})


def _ctx(ws: workspace.Workspace, cost: ev.Evidence) -> RuleContext:
    return RuleContext(ws.config.options, ws.config.matrix, {("cost", None, None): cost})


def _score(found: list[Any], option: str, criterion: str) -> Suggestion | None:
    return next(
        (
            f
            for f in found
            if isinstance(f, Suggestion) and (f.option, f.criterion) == (option, criterion)
        ),
        None,
    )


REPLAYS = list(
    itertools.product(
        (0, 1),  # jobs that never fit
        (None, 0.0, 0.05, 0.2),  # the pool's SLO violation share
        (0.1, None),  # the SLO's allowed share (None: the replay has no SLO)
        ((0, 0), (1800, 3600), (1800, None)),  # wait p95, max
        (3, 6),  # the log's GPUs in use at once in the peak month (the pool has 4)
    )
)


@pytest.mark.parametrize(("never", "share", "allowed", "waits", "concurrent"), REPLAYS)
def test_scale_and_queue_read_one_replay_alike(
    declared: workspace.Workspace,
    never: int,
    share: float | None,
    allowed: float | None,
    waits: tuple[int, int | None],
    concurrent: int,
) -> None:
    """Every shape of replay: the scale score (cost rule) and the queue score (queue rule)
    from the same replay of the same pool never contradict each other."""
    p95, worst = waits
    pool = {
        "gpus": 4,
        "jobs": 20,
        "jobs_unplaceable": never,
        "slo_violation_share": share,
        "wait_p95_s": p95,
        "wait_max_s": worst,
    }
    slo = None if allowed is None else {"name": "normal", "allowed_violation_share": allowed}
    replay = replay_record([pool], slo)
    cost = _checked(concurrent, replay)
    ctx = _ctx(declared, cost)
    scale = _score(cost_rules(cost, ctx), "own", "scale")
    queue = _score(replay_rules(replay, ctx), "own", "queue")
    assert scale is not None and queue is not None
    # Jobs that never fit: 1 on both.
    assert (scale.score == 1) is (queue.score == 1) is bool(never)
    # A replay whose SLO holds (queue 4-5) is never "not absorbed" (2) here; one whose SLO
    # fails (queue 2) is never "absorbed" (4).
    if queue.score >= 4:
        assert scale.score in (3, 4), (scale.rule, queue.rule)
    if queue.score == 2:
        assert scale.score == 2, (scale.rule, queue.rule)
    # The log above the pool is never called absorbed (issue 9, 13).
    if concurrent > 4:
        assert scale.score != 4
    # The rule says what it measures, and its sentence follows from its figures.
    assert "whether 4 GPUs take the whole peak month" in scale.rule
    if worst == 0:
        assert "queue" not in scale.rule
    assert scale.evidence == (cost.id,)


def test_the_demo_case_is_unsettled_not_refused(declared: workspace.Workspace) -> None:
    """Issue 22's case: replay waits of 0 and the SLO met, the log with more GPUs at once
    than the pool. Queue 5 (the waits), scale 3 (the log disagrees), and the scale text says
    why without "jobs queue at the peak"."""
    pool = {"gpus": 4, "jobs": 29, "jobs_unplaceable": 0, "slo_violation_share": 0.0}
    replay = replay_record(
        [pool | {"wait_p95_s": 0.0, "wait_max_s": 0.0}],
        {"name": "normal", "allowed_violation_share": 0.1},
    )
    cost = _cost(6, [replay])
    ctx = _ctx(declared, cost)
    scale = _score(cost_rules(cost, ctx), "own", "scale")
    queue = _score(replay_rules(replay, ctx), "own", "queue")
    assert queue is not None and queue.score == 5
    assert scale is not None and scale.score == 3
    assert scale.rule == (
        "scale, whether 4 GPUs take the whole peak month: unsettled (replay of 4 GPUs (peak "
        "window, fifo): wait p95 0 min, max 0 min; SLO normal violated by 0.0% of jobs, within "
        "the 10.0% allowed; the log shows 6 GPUs in use at once, more than the pool: it holds "
        "jobs of other pools too, or the pool size is wrong; the peak is not called absorbed "
        "until it is settled whether the log is this pool's alone); absorbed 4, unsettled 3, "
        "not absorbed 2, jobs that never fit 1"
    )
    # Its twin: the log inside the pool, the same replay: absorbed, 4.
    cost = _cost(3, [replay])
    scale = _score(cost_rules(cost, _ctx(declared, cost)), "own", "scale")
    assert scale is not None and scale.score == 4 and "no job waited" in scale.rule


def test_the_registry_runs_the_cost_rules() -> None:
    assert cost_rules in rules_for("cost")


def _old(check: dict[str, Any]) -> ev.Evidence:
    """A record written before the peak check stored its outcome."""
    opt = {
        "id": "own",
        "regimes": {"normal": {"total": "1000"}},
        "peak_check": {"pool_gpus": 8, **check},
    }
    other = {"id": "man", "regimes": {"normal": {"total": "500"}}}
    return record("cost", {"currency": "KZT", "options": [opt, other]})


@pytest.mark.parametrize(
    ("check", "outcome", "score"),
    [
        ({"absorbs": True, "jobs_unplaceable": 0}, "absorbed", 4),
        ({"absorbs": False}, "not_absorbed", 2),
        ({"absorbs": True, "jobs_unplaceable": 2}, "never_fits", 1),
        ({"absorbs": None}, "not_measured", None),
        ({"outcome": "unsettled", "absorbs": None}, "unsettled", 3),
        ({"outcome": "lumpy", "absorbs": True}, "absorbed", 4),  # an unknown word: absorbs
    ],
)
def test_an_older_or_hand_made_record_is_read_from_its_absorbs(
    declared: workspace.Workspace, check: dict[str, Any], outcome: str, score: int | None
) -> None:
    assert peak_outcome(check) == outcome and SCALE_SCORES.get(outcome) == score
    cost = _old(check)
    found = cost_rules(cost, _ctx(declared, cost))
    scale = _score(found, "own", "scale")
    assert (scale.score if scale else None) == score
    # Cost bands: 1000 = 2.0 x the cheapest 500 -> 3; the cheapest itself 5.
    assert _score(found, "own", "cost").score == 3  # type: ignore[union-attr]
    assert _score(found, "man", "cost").score == 5  # type: ignore[union-attr]


def test_a_record_without_figures_is_no_finding(declared: workspace.Workspace) -> None:
    """Boundary: no options, an undeclared option, an option without a normal month."""
    ctx = _ctx(declared, record("cost", {}))
    for figures in (
        {},
        {"options": [{"id": "nobody", "regimes": {"normal": {"total": "1"}}}]},
        {"options": [{"id": "own"}, "not an option"]},
    ):
        assert cost_rules(record("cost", figures), ctx) == []


@pytest.mark.parametrize("lang", ["ru", "kk"])
def test_the_rule_texts_read_in_the_language(declared: workspace.Workspace, lang: str) -> None:
    """Every scale and cost text in ru/kk, with no English but identifiers: each outcome
    from a replay, the profile's two, and an older record's."""
    costs = [_old({"absorbs": False})]
    for never, share, concurrent in ((0, 0.0, 3), (0, 0.0, 6), (0, 0.5, 3), (2, 0.0, 3)):
        pool = {"gpus": 4, "jobs_unplaceable": never, "slo_violation_share": share}
        pool |= {"wait_p95_s": 600, "wait_max_s": 900}
        replay = replay_record([pool], {"name": "normal", "allowed_violation_share": 0.1})
        costs.append(_cost(concurrent, [replay]))
    costs += [
        _cost(3, []),
        _cost(6, []),
        _cost(3, [replay_record([{"gpus": 4, "wait_p95_s": 60}])]),
    ]
    found = [f for c in costs for f in cost_rules(c, _ctx(declared, c))]
    assert {f.score for f in found if f.criterion == "scale"} == {1, 2, 3, 4}
    with speaking(lang):
        said = [render(f.rule_message) for f in found if f.rule_message]
    leaks = [
        (t, r)
        for t in said
        if (r := english_runs(t, ["own", "man", "rent", "KZT", "fifo", "normal"]))
    ]
    assert not leaks, leaks[:3]
