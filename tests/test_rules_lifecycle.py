"""Lifecycle summaries (SPEC Q1, Q2) against values worked out by hand: every phase of the
summary, the ambiguity counts, wait reasons ranked and grouped, medians per kind, and each
wait-reason pattern at its first and last alternative (what a changed pattern would lose)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pytest

from gpudecide.queue import lifecycle

PHASE_COLUMNS = (
    "dependency_wait_s",
    "queue_wait_s",
    "prep_s",
    "startup_s",
    "run_s",
    "since_checkpoint_s",
    "end_to_end_s",
)


def _floats(**cols: list[float | None]) -> pa.Table:
    return pa.table({k: pa.array(v, pa.float64()) for k, v in cols.items()})


def test_every_phase_of_the_summary_with_its_meaning() -> None:
    # Each phase gets its own column, so a phase read from the wrong column shows. Three
    # values 0, 10, 10.04 (numpy's linear percentiles): p50 10.0, p90 10.032, p99 10.0396,
    # max 10.04, all rounded to one decimal: 10.0. Queue wait: 0..9 min, p50 4.5 min,
    # p90 8.1 min, p99 8.91 min, max 9 min.
    lc = _floats(
        dependency_wait_s=[1.0, None, None],
        queue_wait_s=[None, None, None],
        prep_s=[0.0, 10.0, 10.04],
        startup_s=[5.0, 7.0, None],
        run_s=[100.0, 200.0, 300.0],
        since_checkpoint_s=[None, 3.0, None],
        end_to_end_s=[2.0, 4.0, 6.0],
    )
    s = lifecycle.phase_summary(lc)
    assert list(s) == [
        "not_eligible",
        "queue_wait",
        "prep",
        "startup",
        "run",
        "since_checkpoint",
        "end_to_end",
    ]
    assert s["not_eligible"] == {
        "meaning": "submit -> eligible (holds, dependencies, begin time)",
        "n": 1,
        "p50": 1.0,
        "p90": 1.0,
        "p99": 1.0,
        "max": 1.0,
        "unmeasured": 2,
    }
    assert s["queue_wait"] == {
        "meaning": "eligible -> start, all attempts",
        "n": 0,
        "p50": None,
        "p90": None,
        "p99": None,
        "max": None,
        "unmeasured": 3,
    }
    assert s["prep"] == {
        "meaning": "start -> prep start (node assigned to preparation)",
        "n": 3,
        "p50": 10.0,
        "p90": 10.0,
        "p99": 10.0,
        "max": 10.0,
        "unmeasured": 0,
    }
    assert s["startup"]["meaning"] == "start -> first training step"
    assert (s["startup"]["n"], s["startup"]["p50"], s["startup"]["max"]) == (2, 6.0, 7.0)
    assert (s["startup"]["p90"], s["startup"]["p99"], s["startup"]["unmeasured"]) == (6.8, 7.0, 1)
    assert s["run"]["meaning"] == "start -> end of the last attempt"
    assert (s["run"]["p50"], s["run"]["p90"], s["run"]["p99"]) == (200.0, 280.0, 298.0)
    assert s["since_checkpoint"]["meaning"] == "last checkpoint -> end"
    assert (s["since_checkpoint"]["n"], s["since_checkpoint"]["max"]) == (1, 3.0)
    assert s["end_to_end"]["meaning"] == "submit -> end"
    assert (s["end_to_end"]["p50"], s["end_to_end"]["max"]) == (4.0, 6.0)


def test_quantiles_round_to_one_decimal_and_one_value_is_every_quantile() -> None:
    q = lifecycle.phase_summary(_floats(**{c: [12.34] for c in PHASE_COLUMNS}))["run"]
    assert (q["n"], q["p50"], q["p90"], q["p99"], q["max"], q["unmeasured"]) == (
        1,
        12.3,
        12.3,
        12.3,
        12.3,
        0,
    )


def _amb(**cols: list[Any]) -> pa.Table:
    t = datetime(2026, 7, 27, tzinfo=UTC)
    n = len(cols["state"])
    base: dict[str, list[Any]] = {
        "eligible": [t] * n,
        "start": [t] * n,
        "first_step": [t] * n,
        "end": [t] * n,
        "run_s": [1.0] * n,
    }
    base.update(cols)
    return pa.table(
        {
            "state": pa.array(base["state"], pa.string()),
            "eligible": pa.array(base["eligible"], pa.timestamp("us", tz="UTC")),
            "start": pa.array(base["start"], pa.timestamp("us", tz="UTC")),
            "first_step": pa.array(base["first_step"], pa.timestamp("us", tz="UTC")),
            "end": pa.array(base["end"], pa.timestamp("us", tz="UTC")),
            "run_s": pa.array(base["run_s"], pa.float64()),
        }
    )


def test_ambiguity_counts_each_reason_apart() -> None:
    t = datetime(2026, 7, 27, tzinfo=UTC)
    states = [
        "failed",  # started, no first step: all three started-without-step counts
        "node_fail",  # same
        "timeout",  # same
        "preempted",  # same
        "completed",  # started without first step, but not a failure
        "failed",  # never started: no first step expected (negative case)
        "failed",  # first step known: the failure is placed (negative case)
        "completed",  # no eligible time only
        "cancelled",  # fully known (negative case)
    ]
    lc = _amb(
        state=states,
        eligible=[t, t, t, t, t, t, t, None, t],
        start=[t, t, t, t, t, None, t, t, t],
        first_step=[None, None, None, None, None, None, t, t, t],
    )
    assert lifecycle.ambiguity(lc) == {
        "jobs": 9,
        "without_eligible_time": 1,
        "without_first_step_time": 5,
        "failures_before_or_after_first_step_unknown": 4,
        "phases_indistinct": 6,
    }


def test_ambiguity_of_a_job_lacking_both_counts_it_once() -> None:
    t = datetime(2026, 7, 27, tzinfo=UTC)
    lc = _amb(state=["completed", "completed"], eligible=[None, t], first_step=[None, t])
    assert lifecycle.ambiguity(lc) == {
        "jobs": 2,
        "without_eligible_time": 1,
        "without_first_step_time": 1,
        "failures_before_or_after_first_step_unknown": 0,
        "phases_indistinct": 1,
    }


def _reasons(rows: list[tuple[str | None, float | None]]) -> pa.Table:
    return pa.table(
        {
            "wait_reason": pa.array([r for r, _ in rows], pa.string()),
            "queue_wait_s": pa.array([w for _, w in rows], pa.float64()),
        }
    )


def test_wait_reasons_ranked_summed_and_categorised() -> None:
    lc = _reasons(
        [
            ("Resources", 100.04),
            ("Resources", 200.0),
            ("QOSMaxGRESPerUser", 1000.0),
            (None, 50.0),
            ("", 25.0),
            ("Priority", 0.0),  # no wait: left out (boundary)
            ("Dependency", None),  # unmeasured: left out
            ("JobHeldUser", -5.0),  # a negative wait is no wait
            ("BeginTime", 0.5),  # the smallest wait counted
        ]
    )
    reasons = lifecycle.wait_reasons(lc)
    assert reasons == [
        {"reason": "QOSMaxGRESPerUser", "category": "quota", "jobs": 1, "total_wait_s": 1000.0},
        {"reason": "Resources", "category": "capacity", "jobs": 2, "total_wait_s": 300.0},
        {"reason": "(none given)", "category": "unknown", "jobs": 2, "total_wait_s": 75.0},
        {"reason": "BeginTime", "category": "begin_time", "jobs": 1, "total_wait_s": 0.5},
    ]
    assert lifecycle.wait_by_category(reasons) == {
        "quota": 1000.0,
        "capacity": 300.0,
        "unknown": 75.0,
        "begin_time": 0.5,
    }


def test_wait_reasons_of_nothing() -> None:
    assert lifecycle.wait_reasons(_reasons([("Resources", 0.0), ("Resources", None)])) == []
    assert lifecycle.wait_by_category([]) == {}


def test_wait_by_category_adds_the_reasons_of_one_category() -> None:
    reasons = [
        {"reason": "Resources", "category": "capacity", "jobs": 1, "total_wait_s": 10.25},
        {"reason": "QOSGrpGRES", "category": "quota", "jobs": 3, "total_wait_s": 7.0},
        {"reason": "Priority", "category": "capacity", "jobs": 2, "total_wait_s": 20.0},
    ]
    assert lifecycle.wait_by_category(reasons) == {"capacity": 30.2, "quota": 7.0}


def test_phase_medians_per_kind() -> None:
    lc = pa.table(
        {
            "kind": pa.array(["train", "eval", "train", None, "", "train"], pa.string()),
            "dependency_wait_s": pa.array([0.0, 5.0, 10.0, 99.0, 99.0, None], pa.float64()),
            "queue_wait_s": pa.array([1.0, None, 3.0, 99.0, 99.0, 8.0], pa.float64()),
            "startup_s": pa.array([None, None, None, 99.0, 99.0, None], pa.float64()),
            "run_s": pa.array([60.0, 30.14, 120.0, 99.0, 99.0, 600.0], pa.float64()),
        }
    )
    assert lifecycle.phases_by_kind(lc) == {
        "eval": {
            "not_eligible": 5.0,
            "queue_wait": None,
            "startup": None,
            "run": 30.1,
            "jobs": 1.0,
        },
        "train": {
            "not_eligible": 5.0,
            "queue_wait": 3.0,
            "startup": None,
            "run": 120.0,
            "jobs": 3.0,
        },
    }
    assert list(lifecycle.phases_by_kind(lc)) == ["eval", "train"]


def test_phase_medians_of_a_log_without_kinds() -> None:
    lc = pa.table(
        {
            "kind": pa.array([None], pa.string()),
            **{c: pa.array([1.0], pa.float64()) for c in ("dependency_wait_s", "queue_wait_s")},
            **{c: pa.array([1.0], pa.float64()) for c in ("startup_s", "run_s")},
        }
    )
    assert lifecycle.phases_by_kind(lc) == {}


@pytest.mark.parametrize(
    ("reason", "category"),
    [
        ("", None),
        ("QOSJobLimit", "quota"),  # something between QOS and Limit
        ("qosgrpgres", "quota"),  # case does not matter
        ("AssocMaxJobsLimit", "quota"),
        ("pods exceeded quota", "quota"),
        ("ResourceQuota", "quota"),
        ("MaxGRESPerAccount", "quota"),
        ("PartitionTimeLimit", "quota"),
        ("dependency", "dependency"),
        ("DependencyNeverSatisfied", "dependency"),
        ("AfterDependency", "other"),  # the pattern is anchored at the start
        ("JobHoldMaxRequeue", "hold"),
        ("jobheldadmin", "hold"),
        ("begintime", "begin_time"),
        ("BeginTimeX", "other"),  # anchored at both ends
        ("XBeginTime", "other"),
        ("JobArrayTaskLimit", "array_limit"),
        ("jobarraytasklimit", "array_limit"),
        ("reqnodenotavail", "constraints"),
        ("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity", "constraints"),
        ("untolerated taint", "constraints"),
        ("topology", "constraints"),
        ("Insufficient memory", "constraints"),
        ("Insufficient ephemeral-storage", "constraints"),
        ("Constraints", "constraints"),
        ("BadConstraints", "constraints"),
        ("resources", "capacity"),
        ("ResourcesX", "other"),
        ("XPriority", "other"),
        ("NodeDown", "capacity"),
        ("NodesDown", "capacity"),
        ("NodeNotAvail", "capacity"),
        ("0/4 nodes: 4 Insufficient nvidia.com/gpu", "capacity"),
        ("0/4 nodes are available", "capacity"),
        ("Launching requested ML instances", "capacity"),
        ("Preparing the instances for training", "capacity"),
        ("InsufficientCapacity", "capacity"),
        ("Queued", "capacity"),
        ("queued by the operator", "other"),
    ],
)
def test_reason_patterns_at_their_ends(reason: str, category: str | None) -> None:
    assert lifecycle.reason_category(reason) == category


def test_integer_phase_columns_with_gaps_are_read_as_seconds() -> None:
    # A table whose phases are whole seconds (int64) with a missing value: the gap is
    # unmeasured, not a crash.
    lc = pa.table({c: pa.array([60, None, 120], pa.int64()) for c in PHASE_COLUMNS})
    run = lifecycle.phase_summary(lc)["run"]
    assert (run["n"], run["p50"], run["max"], run["unmeasured"]) == (2, 90.0, 120.0, 1)
    kinds = lc.append_column("kind", pa.array(["a", "a", "b"], pa.string()))
    assert lifecycle.phases_by_kind(kinds)["a"]["run"] == 60.0
