"""The canonical job table's words: its columns, job kinds and states (DESIGN: canonical job
record), without the Arrow schema (`gpudecide.jobs.schema`), so that option types, figures
and commands read them without loading pyarrow.
"""

from __future__ import annotations

from gpudecide.i18n import N_

__all__ = [
    "CANONICAL_COLUMNS",
    "COLUMN_DOCS",
    "KINDS",
    "REQUIRED_COLUMNS",
    "RESTART_AFTER_STATES",
    "SLURM_COMPACT_STATES",
    "SLURM_STATES",
    "STATES",
    "TIMESTAMP_COLUMNS",
]

KINDS = ("train", "smoke", "restart", "eval", "merge", "quantize", "export", "other")

STATES = (
    "completed",
    "failed",
    "cancelled",
    "preempted",
    "timeout",
    "node_fail",
    "running",
    "pending",
    "requeued",
)

# A re-submission after one of these counts as a restart (issue: failed/preempted run re-submitted).
RESTART_AFTER_STATES = ("failed", "preempted", "timeout", "node_fail", "requeued")

TIMESTAMP_COLUMNS = (
    "submit",
    "eligible",
    "start",
    "prep_start",
    "first_step",
    "last_checkpoint",
    "end",
)

# What each canonical column holds, as catalogue msgids (`gpudecide columns` shows them
# translated); `{kinds}` and `{states}` are the lists of values.
COLUMN_DOCS: dict[str, str] = {
    "job_id": N_(
        "required. Scheduler job id; several rows with one job_id are attempts (requeues)."
    ),
    "attempt": N_("1, 2, ... for requeues of one job_id; default: order of start time."),
    "chain_id": N_("id shared by train -> eval -> merge -> quantize -> export of one model."),
    "name": N_("job name; drives kind classification when `kind` is empty."),
    "kind": N_("explicit kind, wins over rules: {kinds}."),
    "user": N_("who submitted it."),
    "team": N_("team or account."),
    "partition": N_("partition, queue or node pool."),
    "gpu_count": N_("required. GPUs allocated (0 for a CPU job; empty if it never ran)."),
    "gpu_type": N_("GPU class, e.g. h100."),
    "req_gpus": N_("GPUs requested (defaults to gpu_count)."),
    "priority": N_("integer scheduler priority."),
    "priority_class": N_("named priority level: Slurm QOS, Kubernetes priorityClassName."),
    "site": N_("site, region or cluster."),
    "state": N_("required. One of {states} (Slurm state words are accepted too)."),
    "exit_code": N_("exit code as the scheduler printed it."),
    "wait_reason": N_("why it waited (Slurm Reason, Kubernetes FailedScheduling message)."),
    "submit": N_("ISO 8601 time it was submitted; without an offset it is read in --tz."),
    "eligible": N_("time it became ready to run (holds and dependencies over)."),
    "start": N_("time a node was assigned."),
    "prep_start": N_("time preparation (image pull, data staging) began."),
    "first_step": N_("time the first training step ran."),
    "last_checkpoint": N_("time of the last checkpoint written."),
    "end": N_("time it ended."),
    "time_limit_s": N_("requested time limit in seconds."),
}

# Column documentation in English, shown in the README and used by the CSV/JSONL reader.
CANONICAL_COLUMNS: dict[str, str] = {
    name: doc.format(kinds=", ".join(KINDS), states=", ".join(STATES))
    for name, doc in COLUMN_DOCS.items()
}
REQUIRED_COLUMNS = ("job_id", "gpu_count", "state")

# Every job state sacct can print, mapped to canonical states; the detail is kept in
# state_detail. Taken from Slurm's own source, src/common/slurm_protocol_defs.c
# job_state_string() (the words sacct prints) and job_state_string_compact() (the short forms
# squeue prints), for tags slurm-22-05-8-1 through slurm-26-05-3-1; the flag states
# (COMPLETING ... SIGNALING, and EXPEDITING from 25.11 on) take precedence over the base states
# there, so a row shows one of either. slurm.h's JOB_STATE_BASE/JOB_* flags define them.
SLURM_STATES: dict[str, str] = {
    # base states (enum job_states)
    "PENDING": "pending",
    "RUNNING": "running",
    "SUSPENDED": "running",
    "COMPLETED": "completed",
    "CANCELLED": "cancelled",
    "FAILED": "failed",
    "TIMEOUT": "timeout",
    "NODE_FAIL": "node_fail",
    "PREEMPTED": "preempted",
    "BOOT_FAIL": "node_fail",
    "DEADLINE": "timeout",
    "OUT_OF_MEMORY": "failed",
    # flag states: the allocation is held while these last
    "COMPLETING": "running",
    "STAGE_OUT": "running",
    "CONFIGURING": "running",
    "RESIZING": "running",
    "SIGNALING": "running",
    # stopped with SIGSTOP: it keeps its CPUs and GPUs
    "STOPPED": "running",
    # the attempt ended and the job goes back to the queue
    "REQUEUED": "requeued",
    "REQUEUE_FED": "requeued",
    "REQUEUE_HOLD": "requeued",
    "EXPEDITING": "requeued",
    # requeued and held because it exited with the special exit code
    "SPECIAL_EXIT": "requeued",
    # a federation sibling that will not run here
    "REVOKED": "cancelled",
    # held because its reservation was deleted: waiting, not running
    "RESV_DEL_HOLD": "pending",
}
# The short forms (job_state_string_compact) of the same states.
SLURM_COMPACT_STATES: dict[str, str] = {
    "PD": "PENDING",
    "R": "RUNNING",
    "S": "SUSPENDED",
    "CD": "COMPLETED",
    "CA": "CANCELLED",
    "F": "FAILED",
    "TO": "TIMEOUT",
    "NF": "NODE_FAIL",
    "PR": "PREEMPTED",
    "BF": "BOOT_FAIL",
    "DL": "DEADLINE",
    "OOM": "OUT_OF_MEMORY",
    "CG": "COMPLETING",
    "SO": "STAGE_OUT",
    "CF": "CONFIGURING",
    "RS": "RESIZING",
    "SI": "SIGNALING",
    "ST": "STOPPED",
    "RQ": "REQUEUED",
    "RF": "REQUEUE_FED",
    "RH": "REQUEUE_HOLD",
    "SE": "SPECIAL_EXIT",
    "RV": "REVOKED",
    "RD": "RESV_DEL_HOLD",
}
