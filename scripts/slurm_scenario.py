"""Real Slurm jobs for gpudecide's sacct tests (standard library only).

Runs a set of short, real jobs on the local single-node Slurm started by
``scripts/slurm-local start`` (2 fake H100 GPUs, 8 CPUs) and reads them back
with ``sacct``.  Used by ``scripts/record-sacct-fixtures`` to record
``tests/fixtures/sacct/`` and usable directly from tests that want a live
cluster::

    from slurm_scenario import run_scenario, sacct_dump
    roles = run_scenario(tmp_path, full=False)      # ~30-35 s
    text = sacct_dump(job_ids(roles), header=True, tz="UTC")

Also a command line: ``python3 scripts/slurm_scenario.py [--full] [--workdir DIR]``
prints the role map as JSON.  SLURM_SCENARIO_VERBOSE=1 logs progress to
stderr; SLURM_SCENARIO_DEBUG=1 also logs sacct's array rows on every poll.

The cases (role names are the keys of the dict that run_scenario returns):

  train_ok        ft-llama-lora-train, --gres=gpu:h100:2, an ``srun`` step:
                  COMPLETED with steps .batch, .extern and .0
  eval_dep        eval-ft-llama, --gpus=1, afterok:train_ok  (Reason Dependency)
  merge_dep       merge-adapter, --gres=gpu:1, afterok:eval_dep (Reason Dependency)
  smoke_fail      smoke-ft-llama, exits 3: FAILED 3:0
  cancel_running  ft-mistral-lora-train, cancelled while RUNNING: "CANCELLED by 0"
  held_cancel     quantize-awq, submitted --hold and cancelled: never started
  array_sweep     hpo-ft-llama-lr, --array=1-4%1: tasks queue one at a time
  requeued        ft-qwen-lora-train, ``scontrol requeue`` while running: two
                  records with --duplicates (REQUEUED, then COMPLETED)
  export_begin    export-gguf, --begin=now+20: Eligible ~20 s after Submit
  timeout         (full only) ft-llama-long-train, --time=1 sleeping past it: TIMEOUT

Each role maps to a dict; every value in it was checked against sacct before
run_scenario returned:

  job_id          JobID / JobIDRaw of the job (array: the array's JobID)
  name, comment   --job-name and --comment (comment None when not given);
  kind, chain     parsed from "kind=... chain=..." in the comment (or None)
  gpu_request     the sbatch GPU option used, e.g. "--gres=gpu:1" (None: no GPU)
  req_gpus        gres/gpu count in ReqTRES
  gpus, gpu_type  gres/gpu count and the type in AllocTRES (0/None: never ran)
  state           State of the job's last record, as sacct prints it
  ran             False when the job never started
  *_observed      values seen in this run (exit code, Elapsed, ...), for tests
                  that want them; plus role-specific keys (steps, records,
                  depends_on, reason, task_job_ids, pending_row_in_snapshot...)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

# The fields the project recommends for ``sacct --format``.  Every one was
# checked against ``sacct --helpformat`` of Slurm 22.05.8 (Debian 12): all 21
# exist there, none had to be dropped or replaced.  check_fields() re-checks
# them against the installed sacct.
SACCT_FIELDS: list[str] = [
    "JobID",
    "JobIDRaw",
    "JobName",
    "User",
    "Account",
    "Partition",
    "QOS",
    "Priority",
    "State",
    "ExitCode",
    "Reason",
    "Submit",
    "Eligible",
    "Start",
    "End",
    "Elapsed",
    "Timelimit",
    "AllocTRES",
    "ReqTRES",
    "NodeList",
    "Comment",
]
SACCT_FORMAT = ",".join(SACCT_FIELDS)

# Seconds: a tight bound for the quick scenario, a loose one for the full one
# (the TIMEOUT job alone takes 60-90 s: slurmctld checks limits every 30 s).
DEADLINE_QUICK = 240
DEADLINE_FULL = 420

BEGIN_DELAY = 20  # --begin=now+20 for export_begin
ARRAY_TASKS = 4


class ScenarioError(RuntimeError):
    """The cluster did not do what the scenario expected."""


# ---------------------------------------------------------------- commands


def _run(cmd: list[str], *, env: dict[str, str] | None = None, check: bool = True) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise ScenarioError(
            f"{' '.join(cmd)} failed with exit code {proc.returncode}: {proc.stderr.strip()}"
        )
    return proc.stdout


def check_fields() -> list[str]:
    """Return the SACCT_FIELDS that the installed sacct does not know."""
    known = {f.lower() for f in _run(["sacct", "--helpformat"]).split()}
    return [f for f in SACCT_FIELDS if f.lower() not in known]


def sacct_dump(job_ids: Iterable[str | int], *, header: bool, tz: str) -> str:
    """sacct's own text for these jobs: every record (--duplicates), every step,
    all users, ``--parsable2`` with SACCT_FIELDS, times printed in ``tz``."""
    ids = ",".join(str(j) for j in job_ids)
    cmd = [
        "sacct",
        "--allusers",
        "--duplicates",
        "--parsable2",
        f"--format={SACCT_FORMAT}",
        f"--jobs={ids}",
    ]
    if not header:
        cmd.append("--noheader")
    env = dict(os.environ, TZ=tz)
    return _run(cmd, env=env)


def sacct_rows(
    job_ids: Iterable[str | int], *, allocations_only: bool = False
) -> list[dict[str, str]]:
    """sacct_dump parsed into dicts (TZ=UTC)."""
    text = sacct_dump(job_ids, header=True, tz="UTC")
    lines = text.splitlines()
    if not lines:
        return []
    head = lines[0].split("|")
    # A "|" inside a Comment would shift the fields; ours never has one.
    rows = [dict(zip(head, line.split("|"), strict=False)) for line in lines[1:] if line]
    if allocations_only:
        rows = [r for r in rows if "." not in r["JobID"]]
    return rows


def job_ids(roles: dict[str, dict[str, Any]]) -> list[str]:
    """The top-level job ids of a role map (array and requeued jobs included once)."""
    return [r["job_id"] for r in roles.values()]


def _squeue() -> list[dict[str, str]]:
    """Jobs that are still pending/running, one row per job or pending array range."""
    out = _run(["squeue", "-h", "-o", "%F|%K|%A|%i|%T|%r|%M"])
    keys = ("array_id", "task", "raw", "id", "state", "reason", "time")
    rows = []
    for line in out.splitlines():
        f = line.split("|")
        if len(f) == len(keys):
            rows.append(dict(zip(keys, f, strict=True)))
    return rows


def _ts(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value)
    except ValueError:  # "Unknown", "None", ""
        return None


def _gpus(tres: str) -> tuple[int, str | None]:
    """(gpu count, gpu type) from an AllocTRES string."""
    count, gtype = 0, None
    for item in tres.split(","):
        key, _, val = item.partition("=")
        if key == "gres/gpu":
            count = int(val)
        elif key.startswith("gres/gpu:"):
            gtype = key.split(":", 1)[1]
    return count, gtype


# ---------------------------------------------------------------- scenario


def _array_view(text: str, array_id: str) -> tuple[bool, bool]:
    """(tidy, has_range) for an sacct dump: has_range when a pending range row
    ``N_[a-b%1]`` is there; tidy when also some task rows ``N_k`` (running or
    done) are there and the range starts after all of them, i.e. the view is
    consistent mid-flight (sacct's range record lags: it can still read
    ``N_[1-4%1]`` beside a running ``N_1``)."""
    lines = text.splitlines()
    if not lines:
        return False, False
    head = lines[0].split("|")
    i_id, i_state = head.index("JobID"), head.index("State")
    tasks, starts = [], []
    for line in lines[1:]:
        f = line.split("|")
        m = re.fullmatch(rf"{array_id}_(\d+)", f[i_id])
        if m:
            tasks.append(int(m.group(1)))
        m = re.fullmatch(rf"{array_id}_\[(\d+)[^|]*\]", f[i_id])
        if m and f[i_state] == "PENDING":
            starts.append(int(m.group(1)))
    return bool(tasks and starts and min(starts) > max(tasks)), bool(starts)


@dataclass
class _DriveState:
    """What `drive` has seen and done so far."""

    running_since: dict[str, float] = field(default_factory=dict)
    cancelled: bool = False
    requeued: bool = False
    held_cancelled: bool = False
    requeued_at: float = 0.0
    snapshot: str | None = None
    snapshot_fallback: str | None = None


def _records(alloc: list[dict[str, str]], jid: str) -> list[dict[str, str]]:
    """The allocation records of one job (array tasks and steps excluded)."""
    return [row for row in alloc if row["JobIDRaw"] == jid and row["JobID"] == jid]


class _Scenario:
    def __init__(self, workdir: Path, full: bool):
        self.workdir = workdir
        self.full = full
        self.roles: dict[str, dict[str, Any]] = {}
        self.t0 = time.monotonic()
        self.log_lines: list[str] = []

    def log(self, msg: str) -> None:
        line = f"[{time.monotonic() - self.t0:6.1f}s] {msg}"
        self.log_lines.append(line)
        if os.environ.get("SLURM_SCENARIO_VERBOSE"):
            print(line, file=sys.stderr, flush=True)

    def submit(
        self,
        role: str,
        name: str,
        script: str,
        *,
        gpu_args: list[str],
        comment: str | None = None,
        extra: Sequence[str] = (),
        **expect: Any,
    ) -> str:
        kind = chain = None
        if comment:
            kv = dict(p.split("=", 1) for p in comment.split() if "=" in p)
            kind, chain = kv.get("kind"), kv.get("chain")
        cmd = [
            "sbatch",
            "--parsable",
            f"--job-name={name}",
            f"--chdir={self.workdir}",
            f"--output={self.workdir}/%x-%j.out",
            *gpu_args,
            *extra,
        ]
        if comment:
            cmd.append(f"--comment={comment}")
        cmd.append(f"--wrap={script}")
        job_id = _run(cmd).strip().split(";")[0]
        self.log(f"submitted {role}: {job_id} {name} {' '.join(gpu_args + list(extra))}")
        self.roles[role] = {
            "job_id": job_id,
            "name": name,
            "kind": kind,
            "chain": chain,
            "comment": comment,
            "gpu_request": " ".join(gpu_args) or None,
            **expect,
        }
        return job_id

    # -- the jobs ---------------------------------------------------------

    def submit_all(self) -> None:
        t = ["--time=5"]  # 5 min limits let backfill schedule around running jobs
        self._submit_chain(t)
        self._submit_failures(t)
        self._submit_queue_shapes(t)

    def _submit_chain(self, t: list[str]) -> None:
        """train -> eval -> merge by dependencies, and (full only) a training that times out."""
        train = self.submit(
            "train_ok",
            "ft-llama-lora-train",
            "srun sleep 5",
            gpu_args=["--gres=gpu:h100:2"],
            extra=t,
            comment="kind=train chain=ft-llama-7b-r1",
            req_gpus=2,
            gpus=2,
            state="COMPLETED",
            steps=["batch", "extern", "0"],
        )
        if self.full:
            # Submitted early so that its 60-90 s overlap the rest.  One GPU.
            self.submit(
                "timeout",
                "ft-llama-long-train",
                "sleep 600",
                gpu_args=["--gres=gpu:h100:1"],
                extra=["--time=1"],
                comment="kind=train chain=ft-llama-7b-r2",
                req_gpus=1,
                gpus=1,
                state="TIMEOUT",
                timelimit="00:01:00",
            )
        ev = self.submit(
            "eval_dep",
            "eval-ft-llama",
            "sleep 3",
            gpu_args=["--gpus=1"],
            extra=[*t, f"--dependency=afterok:{train}"],
            comment="kind=eval chain=ft-llama-7b-r1",
            req_gpus=1,
            gpus=1,
            state="COMPLETED",
            depends_on="train_ok",
            reason="Dependency",
        )
        self.submit(
            "merge_dep",
            "merge-adapter",
            "sleep 2",
            gpu_args=["--gres=gpu:1"],
            extra=[*t, f"--dependency=afterok:{ev}"],
            comment="kind=merge chain=ft-llama-7b-r1",
            req_gpus=1,
            gpus=1,
            state="COMPLETED",
            depends_on="eval_dep",
            reason="Dependency",
        )

    def _submit_failures(self, t: list[str]) -> None:
        """A job that fails, one cancelled while running, one held and cancelled."""
        self.submit(
            "smoke_fail",
            "smoke-ft-llama",
            "sleep 2; echo 'RuntimeError: CUDA error: out of memory' >&2; exit 3",
            gpu_args=["--gres=gpu:1"],
            extra=t,
            comment="kind=smoke chain=ft-llama-7b-r3",
            req_gpus=1,
            gpus=1,
            state="FAILED",
            exit_code="3:0",
        )
        self.submit(
            "cancel_running",
            "ft-mistral-lora-train",
            "sleep 300",
            gpu_args=["--gpus=h100:1"],
            extra=t,
            req_gpus=1,
            gpus=1,
            state="CANCELLED by 0",
        )
        self.submit(
            "held_cancel",
            "quantize-awq",
            "sleep 5",
            gpu_args=["--gres=gpu:h100:1"],
            extra=[*t, "--hold"],
            comment="kind=quantize chain=ft-llama-7b-r1",
            req_gpus=1,
            gpus=0,
            state="CANCELLED by 0",
            ran=False,
        )

    def _submit_queue_shapes(self, t: list[str]) -> None:
        """A throttled array, a requeued job and one eligible only after --begin."""
        self.submit(
            "array_sweep",
            "hpo-ft-llama-lr",
            "sleep 4",
            gpu_args=["--gpus=1"],
            extra=[*t, f"--array=1-{ARRAY_TASKS}%1"],
            req_gpus=1,
            gpus=1,
            state="COMPLETED",
            tasks=ARRAY_TASKS,
            throttle=1,
        )
        self.submit(
            "requeued",
            "ft-qwen-lora-train",
            "sleep 5",
            gpu_args=["--gres=gpu:1"],
            extra=t,
            comment="kind=train chain=ft-qwen-7b-r1",
            req_gpus=1,
            gpus=1,
            state="COMPLETED",
            records=["REQUEUED", "COMPLETED"],
        )
        self.submit(
            "export_begin",
            "export-gguf",
            "sleep 2",
            gpu_args=[],
            extra=[*t, f"--begin=now+{BEGIN_DELAY}"],
            comment="kind=export chain=ft-llama-7b-r1",
            req_gpus=0,
            gpus=0,
            state="COMPLETED",
            begin_delay_s=BEGIN_DELAY,
        )

    # -- the loop ---------------------------------------------------------

    def drive(self) -> str:
        """Act on the running jobs until all are done; return the pending-array snapshot."""
        deadline = self.t0 + (DEADLINE_FULL if self.full else DEADLINE_QUICK)
        ids = {v["job_id"] for v in self.roles.values()}
        st = _DriveState()
        while True:
            now = time.monotonic()
            if now > deadline:
                self._cleanup(ids)
                raise ScenarioError(
                    "scenario did not finish in time; queue was:\n"
                    + _run(["squeue", "-o", "%i %j %T %r %M"], check=False)
                    + "\n".join(self.log_lines)
                )
            q = [row for row in _squeue() if row["array_id"] in ids]
            for row in q:
                if row["state"] == "RUNNING":
                    st.running_since.setdefault(row["raw"], now)
                else:
                    st.running_since.pop(row["raw"], None)
            self._stop_running_jobs(st, now)
            if st.snapshot is None:
                self._watch_array(st, q, ids)
            if st.snapshot is not None and not st.held_cancelled:
                _run(["scancel", self.roles["held_cancel"]["job_id"]])
                st.held_cancelled = True
                self.log("cancelled held_cancel (never ran)")

            done = st.cancelled and st.held_cancelled and st.requeued
            if not q and done and now - st.requeued_at > 1:
                break
            time.sleep(0.5)
        self.log("all jobs left the queue")
        if st.snapshot is None:
            raise ScenarioError("never saw the array job with a pending task range")
        return st.snapshot

    def _stop_running_jobs(self, st: _DriveState, now: float) -> None:
        """Cancel cancel_running and requeue requeued once each has run for 2 s."""
        r = self.roles

        def up_for(role: str) -> float:
            jid = r[role]["job_id"]
            return now - st.running_since[jid] if jid in st.running_since else -1.0

        if not st.cancelled and up_for("cancel_running") >= 2:
            _run(["scancel", r["cancel_running"]["job_id"]])
            st.cancelled = True
            self.log("cancelled cancel_running while RUNNING")
        if not st.requeued and up_for("requeued") >= 2:
            _run(["scontrol", "requeue", r["requeued"]["job_id"]])
            st.requeued, st.requeued_at = True, now
            st.running_since.pop(r["requeued"]["job_id"], None)
            self.log("requeued requeued while RUNNING")

    def _watch_array(self, st: _DriveState, q: list[dict[str, str]], ids: set[str]) -> None:
        # Snapshot while array tasks still pend.  Wanted: the first tasks'
        # rows next to the range of the later ones (N_1 running or done,
        # N_[2-4%1] pending).  The accounting record of the range is
        # updated lazily (it can read N_[1-4%1] beside a running N_1, and a
        # task's own record can show up seconds late), so check sacct
        # on every pass while the array is in the queue; if no tidy view
        # came before the array finished, keep the first view with a range.
        r = self.roles
        array_id = r["array_sweep"]["job_id"]
        if any(row["array_id"] == array_id for row in q):
            text = sacct_dump([v["job_id"] for v in r.values()], header=True, tz="UTC")
            tidy, has_range = _array_view(text, array_id)
            if os.environ.get("SLURM_SCENARIO_DEBUG"):
                self._log_array_rows(text, array_id)
            if tidy:
                st.snapshot = text
                self.log("recorded the pending-array snapshot")
            elif has_range and st.snapshot_fallback is None:
                st.snapshot_fallback = text
        elif st.snapshot_fallback is not None:
            st.snapshot = st.snapshot_fallback
            self.log("recorded the pending-array snapshot (no tidier view seen)")
        else:
            self._cleanup(ids)
            raise ScenarioError(
                "the array job finished before sacct ever showed a pending task range"
            )

    def _log_array_rows(self, text: str, array_id: str) -> None:
        self.log(
            "array rows: "
            + " ".join(
                "|".join(line.split("|")[i] for i in (0, 8, 13))
                for line in text.splitlines()
                if line.startswith(f"{array_id}_") and "." not in line.split("|")[0]
            )
        )

    def _cleanup(self, ids: Iterable[str]) -> None:
        for jid in ids:
            _run(["scancel", jid], check=False)

    # -- verification -----------------------------------------------------

    def verify(self, snapshot: str) -> None:
        """Wait until sacct holds the final records, check every expectation and
        add what was observed (exit codes, array task ids...) to the role map."""
        ids = [v["job_id"] for v in self.roles.values()]
        problems: list[str] = []
        for _ in range(40):
            rows = sacct_rows(ids)
            problems = self._check(rows, snapshot)
            if not problems:
                return
            time.sleep(0.5)
        raise ScenarioError(
            "sacct does not show what the scenario expected:\n  " + "\n  ".join(problems)
        )

    def _check(self, rows: list[dict[str, str]], snapshot: str) -> list[str]:
        alloc = [row for row in rows if "." not in row["JobID"]]
        problems: list[str] = []
        for role, spec in self.roles.items():
            if role == "array_sweep":
                continue
            recs = _records(alloc, spec["job_id"])
            if not recs:
                problems.append(f"{role}: job {spec['job_id']} not in sacct")
                continue
            problems += self._check_last_record(role, spec, recs[-1])
        problems += self._check_steps(rows)
        problems += self._check_dependencies(alloc)
        problems += self._check_held(alloc)
        problems += self._check_requeued(alloc)
        problems += self._check_begin(alloc)
        problems += self._check_array(alloc)
        self._note_snapshot(snapshot)
        return problems

    def _check_last_record(
        self, role: str, spec: dict[str, Any], last: dict[str, str]
    ) -> list[str]:
        """A job's final record against what was submitted; notes what was observed."""
        problems: list[str] = []
        if last["State"] != spec["state"]:
            problems.append(f"{role}: state {last['State']!r}, expected {spec['state']!r}")
        spec["exit_code_observed"] = last["ExitCode"]
        if "exit_code" in spec and last["ExitCode"] != spec["exit_code"]:
            problems.append(f"{role}: exit code {last['ExitCode']}, expected {spec['exit_code']}")
        gpus, gtype = _gpus(last["AllocTRES"])
        if gpus != spec["gpus"]:
            problems.append(
                f"{role}: AllocTRES {last['AllocTRES']!r}, expected {spec['gpus']} GPUs"
            )
        spec["gpu_type"] = gtype
        req, _ = _gpus(last["ReqTRES"])
        if req != spec["req_gpus"]:
            problems.append(
                f"{role}: ReqTRES {last['ReqTRES']!r}, expected {spec['req_gpus']} GPUs"
            )
        spec["elapsed_observed"] = last["Elapsed"]
        if spec.get("comment") and last["Comment"] != spec["comment"]:
            problems.append(f"{role}: Comment {last['Comment']!r}")
        if "reason" in spec and last["Reason"] != spec["reason"]:
            problems.append(f"{role}: Reason {last['Reason']!r}, expected {spec['reason']!r}")
        if "timelimit" in spec and last["Timelimit"] != spec["timelimit"]:
            problems.append(f"{role}: Timelimit {last['Timelimit']!r}")
        spec.setdefault("ran", True)
        started = _ts(last["Start"])
        if spec["ran"] and (started is None or not last["AllocTRES"]):
            problems.append(f"{role}: expected the job to have run: Start={last['Start']}")
        return problems

    def _check_steps(self, rows: list[dict[str, str]]) -> list[str]:
        """Steps of the srun job."""
        tr = self.roles["train_ok"]
        steps = sorted(
            row["JobID"].split(".", 1)[1]
            for row in rows
            if row["JobID"].startswith(tr["job_id"] + ".")
        )
        if steps != sorted(tr["steps"]):
            return [f"train_ok: steps {steps}, expected {tr['steps']}"]
        return []

    def _check_dependencies(self, alloc: list[dict[str, str]]) -> list[str]:
        """Dependencies: eligible once the job waited for has ended."""
        problems: list[str] = []
        for role in ("eval_dep", "merge_dep"):
            spec = self.roles[role]
            mine = _records(alloc, spec["job_id"])
            dep = _records(alloc, self.roles[spec["depends_on"]]["job_id"])
            if mine and dep:
                elig, dep_end = _ts(mine[-1]["Eligible"]), _ts(dep[-1]["End"])
                if not (elig and dep_end and elig >= dep_end):
                    problems.append(
                        f"{role}: Eligible {mine[-1]['Eligible']} before "
                        f"{spec['depends_on']} End {dep[-1]['End']}"
                    )
        return problems

    def _check_held(self, alloc: list[dict[str, str]]) -> list[str]:
        """Held then cancelled: never started."""
        held = _records(alloc, self.roles["held_cancel"]["job_id"])
        if not held:
            return []
        h = held[-1]
        # Observed with 22.05.8: Eligible "Unknown", End = the cancel time,
        # empty AllocTRES, Priority 0, NodeList "None assigned"; Start is
        # either "None" or equal to End, and Reason either JobHeldUser or
        # None, depending on timing (both seen on this machine).
        self.roles["held_cancel"]["eligible_observed"] = h["Eligible"]
        self.roles["held_cancel"]["start_observed"] = h["Start"]
        if h["AllocTRES"] or (_ts(h["Start"]) is not None and h["Start"] != h["End"]):
            return [
                f"held_cancel: looks started: Start={h['Start']} End={h['End']} "
                f"AllocTRES={h['AllocTRES']!r}"
            ]
        return []

    def _check_requeued(self, alloc: list[dict[str, str]]) -> list[str]:
        """Requeued: two records with --duplicates."""
        rq = self.roles["requeued"]
        states = [row["State"] for row in _records(alloc, rq["job_id"])]
        if states != rq["records"]:
            return [f"requeued: records {states}, expected {rq['records']}"]
        return []

    def _check_begin(self, alloc: list[dict[str, str]]) -> list[str]:
        """--begin: Eligible ~BEGIN_DELAY s after Submit."""
        eb = _records(alloc, self.roles["export_begin"]["job_id"])
        if not eb:
            return []
        sub, elig = _ts(eb[-1]["Submit"]), _ts(eb[-1]["Eligible"])
        lead = (elig - sub).total_seconds() if sub and elig else None
        self.roles["export_begin"]["lead_s_observed"] = lead
        if lead is None or lead < BEGIN_DELAY - 1:
            return [f"export_begin: Submit {eb[-1]['Submit']} Eligible {eb[-1]['Eligible']}"]
        return []

    def _check_array(self, alloc: list[dict[str, str]]) -> list[str]:
        """Array: every task COMPLETED, one at a time (%1)."""
        arr = self.roles["array_sweep"]
        aid = arr["job_id"]
        tasks = {}
        for row in alloc:
            m = re.fullmatch(rf"{aid}_(\d+)", row["JobID"])
            if m:
                tasks[int(m.group(1))] = row
        if sorted(tasks) != list(range(1, ARRAY_TASKS + 1)):
            return [f"array_sweep: tasks {sorted(tasks)}"]
        problems: list[str] = []
        arr["task_job_ids"] = {str(k): tasks[k]["JobIDRaw"] for k in sorted(tasks)}
        bad = [k for k, row in tasks.items() if row["State"] != arr["state"]]
        if bad:
            problems.append(f"array_sweep: tasks {bad} not {arr['state']}")
        for k in range(1, ARRAY_TASKS):
            end, nxt = _ts(tasks[k]["End"]), _ts(tasks[k + 1]["Start"])
            if not (end and nxt and nxt >= end):
                problems.append(f"array_sweep: task {k + 1} started before task {k} ended")
        gpus, gtype = _gpus(tasks[1]["AllocTRES"])
        arr["gpu_type"] = gtype
        if gpus != arr["gpus"]:
            problems.append(f"array_sweep: AllocTRES {tasks[1]['AllocTRES']!r}")
        return problems

    def _note_snapshot(self, snapshot: str) -> None:
        """What the pending-array snapshot showed of the array's rows."""
        arr = self.roles["array_sweep"]
        aid = arr["job_id"]
        m = re.search(rf"^({aid}_\[[^|]*\])\|", snapshot, re.M)
        arr["pending_row_in_snapshot"] = m.group(1) if m else None
        arr["task_rows_in_snapshot"] = {
            f[0]: f[8]
            for f in (line.split("|") for line in snapshot.splitlines())
            if re.fullmatch(rf"{aid}_\d+", f[0])
        }


def run_scenario(workdir: Path, full: bool) -> dict[str, dict[str, Any]]:
    """Submit the scenario's real jobs, wait until all are finished, check sacct.

    Returns {role: {"job_id": ..., "name": ..., "state": ..., "gpus": ..., ...}};
    see the module docstring for the roles.  Also writes, into ``workdir``:
    ``snapshot.pending-array.utc.txt`` (sacct of all jobs, header, TZ=UTC,
    taken while array tasks were still pending), ``scenario.log`` and the
    jobs' output files.  Needs a running cluster (``scripts/slurm-local start``).
    """
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    missing = check_fields()
    if missing:
        raise ScenarioError(f"this sacct lacks the fields {missing}")
    sc = _Scenario(workdir, full)
    try:
        sc.submit_all()
        snapshot = sc.drive()
        (workdir / "snapshot.pending-array.utc.txt").write_text(snapshot)
        sc.verify(snapshot)
        sc.log("verified")
    except BaseException:
        sc._cleanup([v["job_id"] for v in sc.roles.values()])
        raise
    finally:
        (workdir / "scenario.log").write_text("\n".join(sc.log_lines) + "\n")
    return sc.roles


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", action="store_true", help="also the TIMEOUT job (~2 min)")
    ap.add_argument("--workdir", type=Path, help="where job scripts write (default: a temp dir)")
    args = ap.parse_args(argv)
    os.environ.setdefault("SLURM_SCENARIO_VERBOSE", "1")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="slurm-scenario-"))
    t0 = time.monotonic()
    roles = run_scenario(workdir, args.full)
    print(json.dumps(roles, indent=2))
    print(f"# {time.monotonic() - t0:.1f}s, workdir {workdir}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
