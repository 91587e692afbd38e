"""Job kinds: train, smoke, restart, eval, merge, quantize, export, other (SPEC F1).

Order of precedence for one job:
1. a re-submission of the same job after it failed, timed out, lost its node or was preempted
   (same name and user, same chain when one is known) within `restart_window_hours` is a
   restart, whatever its label says: a re-run usually reuses the labelled job script, and
   counting crash restarts is the point of F1;
2. an explicit label (CSV/JSONL `kind` column, `kind=...` in a Slurm job comment);
3. the first name rule that matches (team rules from the workspace, then the defaults);
4. other.
`base_kind` keeps what the job is apart from being a restart (label, else rule).
Requeue attempts of one job (sacct `--duplicates`) are counted as restarts too, at attempt
level: the job keeps its kind, the extra attempts are the restarts.
"""

from __future__ import annotations

import pyarrow as pa

from gpudecide.jobs import sql
from gpudecide.jobs.schema import RESTART_AFTER_STATES
from gpudecide.log_settings import DEFAULT_RULES, ClassifyConfig, Kind, KindRule, validate_rules

# The settings are declared in `gpudecide.log_settings` (the workspace reads them there); they are
# named here too, for the readers that classify jobs.
__all__ = [
    "DEFAULT_RULES",
    "ClassifyConfig",
    "Kind",
    "KindRule",
    "jobs_table",
    "validate_rules",
]


# started: a node was assigned (a row without any GPU field still ran; its count is unknown)
_RAN = "(start IS NOT NULL AND state <> 'pending')"
_GPU_HOURS = "coalesce(gpu_count, 0) * coalesce(elapsed_s, 0) / 3600.0"


def _rule_case(rules: list[KindRule]) -> str:
    """A SQL expression giving the kind of the first name rule that matches, else NULL."""
    if not rules:
        return "NULL"
    whens = " ".join(
        f"WHEN regexp_matches(name, {sql.literal(r.pattern)}, 'i') THEN '{r.kind}'" for r in rules
    )
    return "CASE " + whens + " ELSE NULL END"


def _per_job_sql() -> str:
    """One row per job from its attempts."""
    ran, hours = _RAN, _GPU_HOURS
    # Almost every job has one attempt: those are a projection, only requeued ones a GROUP BY.
    return f"""
    WITH dups AS (SELECT job_id FROM attempts GROUP BY job_id HAVING count(*) > 1)
    SELECT job_id, name, "user", team, chain_id, kind_label, state AS final_state,
      wait_reason AS first_wait_reason, CAST(1 AS INTEGER) AS attempts,
      CAST({ran} AS INTEGER) AS ran_attempts, {ran} AS ran, gpu_count AS gpus, req_gpus,
      gpu_type, submit AS first_submit, eligible AS first_eligible, start AS first_start,
      "end" AS last_end, {hours} AS gpu_hours, 0.0 AS requeue_gpu_hours,
      CASE WHEN state = 'completed' THEN {hours} ELSE 0.0 END AS completed_gpu_hours,
      pending_tasks
    FROM attempts ANTI JOIN dups USING (job_id)
    UNION ALL BY NAME
    SELECT job_id,
      arg_min(name, attempt) AS name,
      arg_min("user", attempt) AS "user",
      arg_min(team, attempt) AS team,
      max(chain_id) AS chain_id,
      max(kind_label) AS kind_label,
      arg_max(state, attempt) AS final_state,
      arg_min(wait_reason, attempt) AS first_wait_reason,
      CAST(count(*) AS INTEGER) AS attempts,
      CAST(count(*) FILTER (WHERE {ran}) AS INTEGER) AS ran_attempts,
      bool_or({ran}) AS ran,
      max(gpu_count) AS gpus,
      max(req_gpus) AS req_gpus,
      max(gpu_type) AS gpu_type,
      min(submit) AS first_submit,
      min(eligible) AS first_eligible,
      min(start) AS first_start,
      max("end") AS last_end,
      sum({hours}) AS gpu_hours,
      coalesce(sum({hours}) FILTER (WHERE attempt > 1), 0) AS requeue_gpu_hours,
      coalesce(sum({hours}) FILTER (WHERE state = 'completed'), 0) AS completed_gpu_hours,
      max(pending_tasks) AS pending_tasks
    FROM attempts SEMI JOIN dups USING (job_id) GROUP BY job_id
    """


def _kinds_sql(rule_case: str, window_s: float) -> str:
    """What follows the `jobs` CTE: each job with its kind, base kind and where the kind
    came from."""
    restart_states = ", ".join(f"'{s}'" for s in RESTART_AFTER_STATES)
    # The restart test needs each job's predecessor under the same name: a window over a
    # narrow projection, joined back, costs far less than sorting every column. Each
    # (chain, user, name) is numbered once, so that the window partitions by a number; and
    # the name rules run once per distinct name, not once per job.
    return f"""
    names AS (
      SELECT *, row_number() OVER () AS name_group FROM (
        SELECT DISTINCT coalesce(chain_id, '') AS chain_key, coalesce("user", '') AS user_key,
          name
        FROM jobs WHERE name IS NOT NULL)
    ),
    prev AS (
      SELECT job_id, first_submit,
        lag(final_state) OVER w AS prev_state,
        lag(last_end) OVER w AS prev_end
      FROM jobs j JOIN names n ON coalesce(j.chain_id, '') = n.chain_key
        AND coalesce(j."user", '') = n.user_key AND j.name = n.name
      WINDOW w AS (PARTITION BY name_group ORDER BY first_submit, job_id)
    ),
    resub AS (
      SELECT job_id FROM prev
      WHERE prev_state IN ({restart_states}) AND first_submit >= prev_end
        AND epoch(first_submit) - epoch(prev_end) <= {window_s}
    ),
    rules AS (SELECT name, {rule_case} AS rule_kind FROM (SELECT DISTINCT name FROM jobs)),
    flagged AS (
      SELECT j.*, r.job_id IS NOT NULL AS is_resubmission, k.rule_kind
      FROM jobs j LEFT JOIN resub r USING (job_id)
        LEFT JOIN rules k ON j.name IS NOT DISTINCT FROM k.name
    )
    SELECT * EXCLUDE (rule_kind),
      CASE WHEN is_resubmission THEN 'restart'
           ELSE coalesce(kind_label, rule_kind, 'other') END AS kind,
      -- what the job is apart from being a restart: a completed restart of a training is a
      -- successful training
      coalesce(kind_label, rule_kind, 'other') AS base_kind,
      CASE WHEN is_resubmission THEN 'resubmission'
           WHEN kind_label IS NOT NULL THEN 'label'
           WHEN rule_kind IS NOT NULL THEN 'name rule'
           ELSE 'no rule matched' END AS kind_source
    FROM flagged
    """


def jobs_table(attempts: pa.Table, config: ClassifyConfig | None = None) -> pa.Table:
    """One row per job with its kind, final state, attempts and GPU-hours."""
    cfg = config or ClassifyConfig()
    rule_case = _rule_case(cfg.effective_rules())
    window_s = cfg.restart_window_hours * 3600.0
    con = sql.connect(attempts=attempts)
    try:
        # one statement: the jobs are never materialised between the two steps
        table = con.sql(
            f"WITH jobs AS ({_per_job_sql()}), {_kinds_sql(rule_case, window_s)}"
        ).to_arrow_table()
    finally:
        con.close()
    return table
