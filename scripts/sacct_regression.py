"""Real Slurm jobs with the shapes production logs have (standard library only).

Used by ``scripts/record-sacct-fixtures --regression`` to record
``tests/fixtures/sacct/regression.*``.  The cases, in the order they run:

  blocker         blocker-train, --gres=gpu:h100:2, sleep 20: holds both GPUs
  pending_cancel  ft-pending-cancel-train, --gres=gpu:1, cancelled while PENDING
                  (Reason Resources): Start = End = cancel time, Elapsed 0,
                  NodeList "None assigned", AllocTRES empty, ReqTRES filled
  array_limit     hpo-sweep-lr, --array=1-6%2 --gres=gpu:1, sleep 3: at most two
                  tasks at a time, the rest wait with Reason JobArrayTaskLimit;
                  a snapshot is taken while tasks still pend (``N_[a-6%2]``)
  requeue         ft-requeue-train, --gres=gpu:1, ``scontrol requeue`` while running
  node_fail       ft-nodefail-train, --gres=gpu:1 --no-requeue, the node is set
                  DOWN (reason drill) while it runs, then resumed: NODE_FAIL

What this Slurm (22.05, AccountingStorageTRES=gres/gpu) cannot print: the old
AllocGRES/ReqGRES columns (``sacct: fatal: AllocGRES has been removed``), and a
running job whose AllocTRES lacks its GPUs (the GPU TRES is always accounted).
The closest shape, a ``--gres=gpu:1`` job with an empty AllocTRES, is
pending_cancel.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import slurm_scenario as sc

DEADLINE_S = 300


def _state(job_id: str) -> str:
    """The job's squeue state, or its sacct state once it left the queue."""
    out = sc._run(["squeue", "-h", "-j", job_id, "-o", "%T"], check=False).strip()
    if out:
        return out.splitlines()[0]
    rows = [r for r in sc.sacct_rows([job_id], allocations_only=True) if r["JobID"] == job_id]
    return rows[-1]["State"] if rows else "UNKNOWN"


def _wait(what: str, test: Any, timeout: float = DEADLINE_S) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if test():
            return
        time.sleep(0.5)
    raise sc.ScenarioError(f"timed out waiting for {what}")


def _sbatch(workdir: Path, name: str, *args: str) -> str:
    out = sc._run(
        [
            "sbatch",
            "--parsable",
            f"--job-name={name}",
            f"--chdir={workdir}",
            f"--output={workdir}/%x-%j.out",
            "--time=5",
            *args,
        ]
    )
    return out.strip().split(";")[0]


def _queue_empty_of(ids: list[str]) -> bool:
    out = sc._run(["squeue", "-h", "-o", "%F"], check=False).split()
    return not set(out) & set(ids)


def run(workdir: Path) -> tuple[dict[str, dict[str, Any]], str]:
    """Run the cases; return the role map and the pending-array snapshot (sacct text)."""
    roles: dict[str, dict[str, Any]] = {}
    blocker = _sbatch(workdir, "blocker-train", "--gres=gpu:h100:2", "--wrap=sleep 20")
    roles["blocker"] = {"job_id": blocker}
    _wait("blocker running", lambda: _state(blocker) == "RUNNING")
    pending = _sbatch(workdir, "ft-pending-cancel-train", "--gres=gpu:1", "--wrap=sleep 5")
    array = _sbatch(workdir, "hpo-sweep-lr", "--array=1-6%2", "--gres=gpu:1", "--wrap=sleep 3")
    roles["pending_cancel"] = {"job_id": pending}
    roles["array_limit"] = {"job_id": array, "tasks": 6, "limit": 2}
    time.sleep(4)
    sc._run(["scancel", pending])
    # Snapshot once two tasks ran or run and the rest still pend as a range.
    snapshot = ""

    def tidy() -> bool:
        nonlocal snapshot
        text = sc.sacct_dump([blocker, pending, array], header=True, tz="UTC")
        ok, _ = sc._array_view(text, array)
        if ok:
            snapshot = text
        return ok

    _wait("array snapshot with a pending range", tidy)
    _wait("array done", lambda: _queue_empty_of([blocker, array]))
    requeue = _sbatch(workdir, "ft-requeue-train", "--gres=gpu:1", "--wrap=sleep 8")
    roles["requeue"] = {"job_id": requeue}
    _wait("requeue job running", lambda: _state(requeue) == "RUNNING")
    time.sleep(2)
    sc._run(["scontrol", "requeue", requeue])
    _wait("requeued job done", lambda: _state(requeue) == "COMPLETED", timeout=120)
    nodefail = _sbatch(
        workdir, "ft-nodefail-train", "--gres=gpu:1", "--no-requeue", "--wrap=sleep 120"
    )
    roles["node_fail"] = {"job_id": nodefail}
    _wait("node-fail job running", lambda: _state(nodefail) == "RUNNING")
    time.sleep(2)
    sc._run(["scontrol", "update", "nodename=localhost", "state=down", "reason=drill"])
    try:
        _wait("NODE_FAIL", lambda: _state(nodefail) == "NODE_FAIL", timeout=60)
    finally:
        sc._run(["scontrol", "update", "nodename=localhost", "state=resume"], check=False)
    _wait(
        "node idle again",
        lambda: "idle" in sc._run(["sinfo", "-h", "-o", "%T"], check=False),
        timeout=60,
    )
    # sacct's records lag a little behind the controller.
    time.sleep(3)
    return roles, snapshot
