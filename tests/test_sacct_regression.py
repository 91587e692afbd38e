"""The regression set: real sacct output with production shapes, against hand-worked figures.

Recorded from the local Slurm by `scripts/record-sacct-fixtures --regression`; the expected
figures and how each was worked out are in tests/fixtures/sacct/regression.expected.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpudecide.jobs.load import load_logs
from gpudecide.jobs.profile import ProfileOptions, build_profile
from gpudecide.queue.analysis import QueueOptions, analyse_queue
from gpudecide.queue.slo import SLO, SLOFile

from .conftest import SACCT

EXPECTED: dict[str, Any] = json.loads((SACCT / "regression.expected.json").read_text())
UTC_LOG = SACCT / "regression.utc.txt"
PENDING_LOG = SACCT / "regression.pending.txt"
ROLES = json.loads((SACCT / "regression.json").read_text())["roles"]


def _without_why(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "why"}


@pytest.fixture(scope="module")
def profile() -> dict[str, Any]:
    return build_profile(load_logs([UTC_LOG]), ProfileOptions(weeks=1)).figures


@pytest.fixture(scope="module")
def queue() -> dict[str, Any]:
    slos = SLOFile(
        slos={
            "normal": SLO(
                measure="submit_to_start", threshold_minutes=0.3, allowed_violation_share=0.1
            ),
            "urgent": SLO(threshold_minutes=60, allowed_violation_share=0.05),
        }
    )
    return analyse_queue(load_logs([UTC_LOG]), QueueOptions(slos=slos))


def test_profile_figures(profile: dict[str, Any]) -> None:
    want = _without_why(EXPECTED["utc"]["profile"])
    assert {k: profile[k] for k in want} == want


def test_profile_and_queue_print_one_reconciliation(
    profile: dict[str, Any], queue: dict[str, Any]
) -> None:
    want = _without_why(EXPECTED["utc"]["reconciliation"])
    assert profile["reconciliation"] == want
    assert queue["summary"]["reconciliation"] == want


def test_pending_cancel_is_never_started_and_waits_to_its_cancel(queue: dict[str, Any]) -> None:
    want = EXPECTED["utc"]["queue"]
    s = queue["summary"]
    assert (s["jobs"], s["started"], s["never_started"], s["still_waiting"]) == (
        want["jobs"],
        want["started"],
        want["never_started"],
        want["still_waiting"],
    )
    jobs = {j["job_id"]: j for j in queue["jobs"]}
    cancelled = jobs[ROLES["pending_cancel"]["job_id"]]
    assert cancelled["start"] is None and cancelled["gpus"] == 1  # asked for, never held
    assert cancelled["queue_wait_s"] == want["pending_cancel_queue_wait_s"]
    assert jobs[ROLES["requeue"]["job_id"]]["queue_wait_s"] == want["requeue_queue_wait_s"]
    assert queue["preemption"]["stops"] == want["preemption_stops"]


def test_slo_violations_by_cause(queue: dict[str, Any]) -> None:
    want = _without_why(EXPECTED["utc"]["slo_submit_to_start_18s"])
    normal = next(s for s in queue["slo"] if s["name"] == "normal")
    assert {k: normal[k] for k in want} == want
    # 6 of 9 violate against 10 % allowed: the interval (35 %-88 %) excludes it
    assert normal["verdict"] == "fail" and normal["conclusive"] is True


def test_peak_above_the_pool_is_said() -> None:
    figures = build_profile(load_logs([UTC_LOG]), ProfileOptions(weeks=1, pool_gpus=1)).figures
    assert figures["peak_exceeds_pool"] is EXPECTED["utc"]["pool_1_gpu"]["peak_exceeds_pool"]
    assert any("more than the 1-GPU pool" in n for n in figures["notes"])
    roomy = build_profile(load_logs([UTC_LOG]), ProfileOptions(weeks=1, pool_gpus=2)).figures
    assert roomy["peak_exceeds_pool"] is False  # boundary: 2 GPUs at once on 2 GPUs fits
    assert not any("pool" in n for n in roomy["notes"])


def test_pending_array_range_counts_its_tasks() -> None:
    want = EXPECTED["pending"]
    log = load_logs([PENDING_LOG])
    figures = build_profile(log, ProfileOptions(weeks=1)).figures
    assert figures["reconciliation"] == _without_why(want["reconciliation"])
    assert figures["pending"] == want["profile_pending"]
    q = analyse_queue(log)
    assert q["summary"]["jobs"] == want["queue_jobs"]
    assert q["summary"]["still_waiting"] == want["queue_still_waiting"]


def test_newer_slurm_pending_cancel_row_start_equals_end(tmp_path: Path) -> None:
    """Slurm 23.02+ prints the pending-cancelled job with Start = End = the cancel time."""
    lines = UTC_LOG.read_text().splitlines()
    head = lines[0].split("|")
    prefix = ROLES["pending_cancel"]["job_id"] + "|"
    i = next(n for n, ln in enumerate(lines) if ln.startswith(prefix))
    parts = lines[i].split("|")
    parts[head.index("Start")] = parts[head.index("End")]
    # AllocTRES may still be filled on such rows
    parts[head.index("AllocTRES")] = parts[head.index("ReqTRES")]
    lines[i] = "|".join(parts)
    path = tmp_path / "newer.txt"
    path.write_text("\n".join(lines) + "\n")
    figures = build_profile(load_logs([path]), ProfileOptions(weeks=1)).figures
    assert figures["never_started"] == 1
    assert figures["jobs_total"] == 9
    assert figures["gpu_hours_total"] == EXPECTED["utc"]["profile"]["gpu_hours_total"]
    q = analyse_queue(load_logs([path]))
    row = next(j for j in q["jobs"] if j["job_id"] == ROLES["pending_cancel"]["job_id"])
    assert row["start"] is None and row["queue_wait_s"] == 4.0

    # without a NodeList field: cancelled, Start = End, Elapsed 0 is read the same way
    keep = [n for n, name in enumerate(head) if name != "NodeList"]
    cut = tmp_path / "no-nodelist.txt"
    cut.write_text("\n".join("|".join(ln.split("|")[k] for k in keep) for ln in lines) + "\n")
    assert build_profile(load_logs([cut]), ProfileOptions(weeks=1)).figures["never_started"] == 1
