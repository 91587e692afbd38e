"""Slurm `sacct --parsable2` output into the canonical attempt table.

Parsing runs inside DuckDB (multi-threaded CSV reader, vectorised regex and time parsing), so a
million-job log with its steps stays within seconds. Rows DuckDB cannot split into the declared
fields come back from its reject table with their line numbers; rows whose fields do not parse
are flagged in SQL, and only then located in the file by a plain scan (the error path), so every
message names file, line and field.

What sacct prints, as seen on a real Slurm 22.05 (see tests/fixtures/sacct/):
- times in the local time zone of the sacct process, `Unknown` or `None` when unset;
- `State` like `CANCELLED by 1234`;
- job steps `123.batch`, `123.extern`, `123.0` after their job; array tasks `123_4` and pending
  ranges `123_[5-9%2]`; heterogeneous components `123+0`;
- with `--duplicates`, a requeued job once per attempt (`REQUEUED`, then the new attempt);
- `AllocTRES` like `billing=2,cpu=2,gres/gpu:h100=2,gres/gpu=2,mem=1000M,node=1`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from gpudecide.errors import InputError
from gpudecide.jobs import sql
from gpudecide.jobs.schema import ATTEMPTS_SCHEMA, KINDS, SLURM_STATES

# The --format list the README recommends; every field exists in Slurm 22.05 and later.
RECOMMENDED_FIELDS = (
    "JobID,JobIDRaw,JobName,User,Account,Partition,QOS,Priority,State,ExitCode,Reason,"
    "Submit,Eligible,Start,End,Elapsed,Timelimit,AllocTRES,ReqTRES,NodeList,Comment"
)
RECOMMENDED_COMMAND = (
    "sacct --allusers --duplicates --parsable2 --starttime now-8weeks "
    f"--format={RECOMMENDED_FIELDS}"
)

# `sacct --helpformat` of Slurm 22.05; used to tell a header line from a data line.
KNOWN_FIELDS = frozenset(
    f.lower()
    for f in [
        "Account",
        "AdminComment",
        "AllocCPUS",
        "AllocGRES",
        "AllocNodes",
        "AllocTRES",
        "AssocID",
        "AveCPU",
        "AveCPUFreq",
        "AveDiskRead",
        "AveDiskWrite",
        "AvePages",
        "AveRSS",
        "AveVMSize",
        "BlockID",
        "Cluster",
        "Comment",
        "Constraints",
        "ConsumedEnergy",
        "ConsumedEnergyRaw",
        "Container",
        "CPUTime",
        "CPUTimeRAW",
        "DBIndex",
        "DerivedExitCode",
        "Elapsed",
        "ElapsedRaw",
        "Eligible",
        "End",
        "ExitCode",
        "Extra",
        "Flags",
        "GID",
        "Group",
        "JobID",
        "JobIDRaw",
        "JobName",
        "Layout",
        "MaxDiskRead",
        "MaxDiskReadNode",
        "MaxDiskReadTask",
        "MaxDiskWrite",
        "MaxDiskWriteNode",
        "MaxDiskWriteTask",
        "MaxPages",
        "MaxPagesNode",
        "MaxPagesTask",
        "MaxRSS",
        "MaxRSSNode",
        "MaxRSSTask",
        "MaxVMSize",
        "MaxVMSizeNode",
        "MaxVMSizeTask",
        "McsLabel",
        "MinCPU",
        "MinCPUNode",
        "MinCPUTask",
        "NCPUS",
        "NNodes",
        "NodeList",
        "NTasks",
        "Partition",
        "Planned",
        "PlannedCPU",
        "PlannedCPURAW",
        "Priority",
        "QOS",
        "QOSRAW",
        "Reason",
        "ReqCPUFreq",
        "ReqCPUFreqGov",
        "ReqCPUFreqMax",
        "ReqCPUFreqMin",
        "ReqCPUS",
        "ReqGRES",
        "ReqMem",
        "ReqNodes",
        "ReqTRES",
        "Reservation",
        "ReservationId",
        "Reserved",
        "ResvCPU",
        "ResvCPURAW",
        "Start",
        "State",
        "Submit",
        "SubmitLine",
        "Suspended",
        "SystemComment",
        "SystemCPU",
        "Timelimit",
        "TimelimitRaw",
        "TotalCPU",
        "TRESUsageInAve",
        "TRESUsageInMax",
        "TRESUsageInMaxNode",
        "TRESUsageInMaxTask",
        "TRESUsageInMin",
        "TRESUsageInMinNode",
        "TRESUsageInMinTask",
        "TRESUsageInTot",
        "TRESUsageOutAve",
        "TRESUsageOutMax",
        "TRESUsageOutMaxNode",
        "TRESUsageOutMaxTask",
        "TRESUsageOutMin",
        "TRESUsageOutMinNode",
        "TRESUsageOutMinTask",
        "TRESUsageOutTot",
        "UID",
        "User",
        "UserCPU",
        "WCKey",
        "WCKeyID",
        "WorkDir",
    ]
)

_FIELD_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_HINT_FORMAT = (
    "pass --sacct-format with the --format list given to sacct, or run sacct without --noheader"
)

# Patterns, written once for DuckDB's RE2. Job id: 123, 123_4, 123_[5-9%2], 123+0, then .step
_JOBID_RE = r"^(\d+)(_(\d+|\[[0-9,%\-]+\]))?(\+\d+)?(\.[A-Za-z0-9_+\-]+)?$"
_TIME_RE = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$"
_UNSET_TIMES = ("", "Unknown", "None")
_UNLIMITED = ("", "UNLIMITED", "Partition_Limit", "INVALID", "NONE")


@dataclass
class BadRow:
    """A row that could not be read, with where and why."""

    path: str
    line: int | None
    field: str | None
    reason: str

    def as_error(self) -> InputError:
        """The row as the exit-2 error the CLI prints."""
        return InputError(
            self.reason,
            path=self.path,
            line=self.line,
            field=self.field,
            hint="fix the row, or pass --skip-bad-rows to count and report such rows",
        )


@dataclass
class ParseResult:
    """Attempts read from one source plus the rows that had to be skipped."""

    table: pa.Table
    bad_rows: list[BadRow] = field(default_factory=list)
    data_lines: int = 0
    notes: list[str] = field(default_factory=list)


def _sniff_header(path: Path) -> list[str] | None:
    """Field names when the first non-empty line is a sacct header, else None."""
    with open(path, "rb") as handle:
        for raw in handle:
            text = raw.decode("utf-8", errors="replace").strip("\r\n")
            if not text.strip():
                continue
            names = [n.strip() for n in text.split("|")]
            if all(_FIELD_NAME.match(n) for n in names) and any(
                n.lower() in KNOWN_FIELDS for n in names
            ):
                return names
            return None
    return None


def parse_format_list(fmt: str) -> list[str]:
    """A sacct `--format` list (`JobID,JobName%30,...`) as field names, widths dropped."""
    names = [part.split("%", 1)[0].strip() for part in fmt.split(",") if part.strip()]
    unknown = [n for n in names if n.lower() not in KNOWN_FIELDS]
    if unknown:
        raise InputError(
            f"unknown sacct field(s) {', '.join(unknown)}",
            field="--sacct-format",
            hint="see `sacct --helpformat`",
        )
    return names


def _field_map(names: Sequence[str], path: Path) -> dict[str, str]:
    """Lower-cased sacct field name -> positional column name `cN` (first occurrence wins)."""
    mapping: dict[str, str] = {}
    for i, name in enumerate(names):
        mapping.setdefault(name.lower(), f"c{i}")
    missing = [] if {"jobid", "jobidraw"} & mapping.keys() else ["JobID"]
    for need in ("state", "start"):
        if need not in mapping:
            missing.append(need.capitalize())
    if "end" not in mapping and "elapsed" not in mapping:
        missing.append("End")
    if not {"alloctres", "allocgres", "reqtres"} & mapping.keys():
        missing.append("AllocTRES")
    if missing:
        raise InputError(
            f"sacct output lacks field(s) {', '.join(missing)}",
            path=path,
            line=1,
            hint=f"re-run it as: {RECOMMENDED_COMMAND}",
        )
    return mapping


def _time_sql(col: str, tz: str) -> str:
    """Local sacct time -> UTC TIMESTAMPTZ; unset words and malformed text -> NULL."""
    return (
        f"CASE WHEN {col} IN {_UNSET_TIMES} THEN NULL ELSE "
        f"timezone({sql.literal(tz)}, try_strptime({col}, '%Y-%m-%dT%H:%M:%S')) END"
    )


# Slurm time strings: "MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS" (sbatch(1)).
# Plain string splits: a regex here cost more than the rest of the parse put together.
_DURATION_MACRO = f"""
CREATE MACRO slurm_hms(has_day, rest) AS
  CASE length(rest) - length(replace(rest, ':', ''))
    WHEN 2 THEN try_cast(split_part(rest, ':', 1) AS BIGINT) * 3600
              + try_cast(split_part(rest, ':', 2) AS BIGINT) * 60
              + try_cast(split_part(rest, ':', 3) AS BIGINT)
    WHEN 1 THEN CASE WHEN has_day
      THEN try_cast(split_part(rest, ':', 1) AS BIGINT) * 3600
         + try_cast(split_part(rest, ':', 2) AS BIGINT) * 60
      ELSE try_cast(split_part(rest, ':', 1) AS BIGINT) * 60
         + try_cast(split_part(rest, ':', 2) AS BIGINT) END
    WHEN 0 THEN try_cast(rest AS BIGINT) * CASE WHEN has_day THEN 3600 ELSE 60 END
  END;
CREATE MACRO slurm_duration(x) AS
  CASE WHEN x IS NULL OR x IN {_UNLIMITED} THEN NULL
       WHEN contains(x, '-') THEN try_cast(split_part(x, '-', 1) AS BIGINT) * 86400
                                  + slurm_hms(true, split_part(x, '-', 2))
       ELSE slurm_hms(false, x) END;
"""


def _duration_sql(col: str) -> str:
    """Seconds of a Slurm duration; unlimited or malformed -> NULL."""
    return f"slurm_duration({col})"


def _tres_gpus(col: str) -> str:
    """GPU count in a TRES string: untyped `gres/gpu=N`, else the sum of typed entries."""
    return f"""CASE WHEN {col} IS NULL OR {col} = '' THEN NULL
      WHEN contains({col}, 'gres/gpu=') THEN
        try_cast(split_part(split_part({col}, 'gres/gpu=', 2), ',', 1) AS INTEGER)
      WHEN contains({col}, 'gres/gpu:') THEN
        CAST(list_sum(list_transform(
          regexp_extract_all({col}, '(?:^|,)gres/gpu:[^=,]+=(\\d+)', 1),
          lambda x: CAST(x AS INTEGER))) AS INTEGER)
      ELSE 0 END"""


def _tres_gpu_type(col: str) -> str:
    """First GPU type named in a TRES string (`gres/gpu:h100=2` -> h100)."""
    return (
        f"CASE WHEN contains({col}, 'gres/gpu:') THEN "
        f"split_part(split_part({col}, 'gres/gpu:', 2), '=', 1) END"
    )


def _gres_gpus(col: str) -> str:
    """Old-style AllocGRES `gpu:2` / `gpu:h100:2`."""
    return f"""CASE WHEN {col} IS NULL OR {col} = '' THEN NULL
      WHEN regexp_matches({col}, '(^|,)gpu(:[^:,=]+)?:\\d+') THEN
        CAST(regexp_extract({col}, '(?:^|,)gpu(?::[^:,=]+)?:(\\d+)', 1) AS INTEGER)
      ELSE 0 END"""


def _state_case(col: str) -> str:
    word = f"upper(split_part({col}, ' ', 1))"
    arms = " ".join(f"WHEN '{k}' THEN '{v}'" for k, v in SLURM_STATES.items())
    return f"CASE {word} {arms} ELSE NULL END"


def _count_range_sql(col: str) -> str:
    """Number of tasks in a pending array range `[1,3,5-9%2]`."""
    inner = f"regexp_extract({col}, '_\\[([0-9,\\-]+)', 1)"
    return f"""CAST(list_sum(list_transform(string_split({inner}, ','),
        lambda x: CASE WHEN contains(x, '-')
             THEN try_cast(split_part(x, '-', 2) AS INTEGER)
                  - try_cast(split_part(x, '-', 1) AS INTEGER) + 1
             ELSE 1 END)) AS INTEGER)"""


_KIND_RE = r"(?:^|[\s,;])(?:gpudecide\.)?kind=([^\s,;]*)"
_CHAIN_RE = r"(?:^|[\s,;])(?:gpudecide\.)?chain=([^\s,;]+)"
_TIME_FIELDS = ("submit", "eligible", "start", "end")
_USED_FIELDS = frozenset(
    [
        "jobid",
        "jobidraw",
        "jobname",
        "user",
        "account",
        "partition",
        "alloctres",
        "allocgres",
        "reqtres",
        "priority",
        "qos",
        "cluster",
        "state",
        "exitcode",
        "reason",
        "submit",
        "eligible",
        "start",
        "end",
        "elapsed",
        "timelimit",
        "comment",
    ]
)


def _build_sql(m: dict[str, str], tz: str, source: str, *, with_values: bool = False) -> str:
    """SELECT that parses every row; `bad_field` names the first field that did not parse.

    Step rows only need their job id and start, so everything else is skipped for them.
    `with_values` adds the offending raw text (used on the error path only).
    """
    used = m.keys() & _USED_FIELDS
    if "jobid" in m:
        used -= {"jobidraw"}
    raw_cols = {name: f"r_{name}" for name in sorted(used)}

    def r(name: str) -> str:
        return raw_cols.get(name, "NULL::VARCHAR")

    def job(expr: str) -> str:
        return f"CASE WHEN is_step THEN NULL ELSE {expr} END"

    jobid = r("jobid") if "jobid" in m else r("jobidraw")
    tres_col = r("alloctres") if "alloctres" in m else r("reqtres")
    if "alloctres" in m:
        alloc = _tres_gpus(r("alloctres"))
    elif "allocgres" in m:
        alloc = _gres_gpus(r("allocgres"))
    else:
        alloc = "NULL::INTEGER"
    kinds = ", ".join(f"'{k}'" for k in KINDS)
    select_raw = ", ".join(f"{m[name]} AS {col}" for name, col in raw_cols.items())
    parsed = {
        "array_job_id": f"nullif(regexp_extract({jobid}, '^(\\d+)_', 1), '')",
        "pending_tasks": f"CASE WHEN contains({jobid}, '_[') THEN {_count_range_sql(jobid)} END",
        "name": f"nullif({r('jobname')}, '')",
        '"user"': f"nullif({r('user')}, '')",
        "team": f"nullif({r('account')}, '')",
        "partition": f"nullif({r('partition')}, '')",
        "gpu_count": alloc,
        "gpu_type": _tres_gpu_type(tres_col),
        # ReqTRES mostly repeats AllocTRES: parse it only when it says something else.
        "req_gpus": (
            f"CASE WHEN {r('reqtres')} = {tres_col} THEN {alloc} "
            f"ELSE {_tres_gpus(r('reqtres'))} END"
            if "reqtres" in m
            else "NULL::INTEGER"
        ),
        "priority": f"try_cast(nullif({r('priority')}, '') AS BIGINT)",
        "priority_class": f"nullif({r('qos')}, '')",
        "site": f"nullif({r('cluster')}, '')",
        "state": _state_case(r("state")),
        "state_detail": f"nullif({r('state')}, '')",
        "exit_code": f"nullif({r('exitcode')}, '')",
        "wait_reason": f"CASE WHEN {r('reason')} IN ('', 'None') THEN NULL ELSE {r('reason')} END",
        "submit": _time_sql(r("submit"), tz),
        "eligible": _time_sql(r("eligible"), tz),
        '"end"': _time_sql(r("end"), tz),
        "elapsed_raw_s": _duration_sql(r("elapsed")) if "elapsed" in m else "NULL::BIGINT",
        "time_limit_s": _duration_sql(r("timelimit")) if "timelimit" in m else "NULL::BIGINT",
        "kind_label": f"nullif(lower(regexp_extract({r('comment')}, '{_KIND_RE}', 1)), '')",
        "chain_id": f"nullif(regexp_extract({r('comment')}, '{_CHAIN_RE}', 1), '')",
    }
    checks = [
        ("JobID", jobid, f"NOT regexp_full_match({jobid}, '{_JOBID_RE}')"),
        ("State", r("state"), "(NOT is_step AND state IS NULL)"),
        *(
            (
                n.capitalize(),
                r(n),
                f"({'' if n == 'start' else 'NOT is_step AND '}"
                f"{r(n)} NOT IN {_UNSET_TIMES} AND {q} IS NULL)",
            )
            for n, q in zip(_TIME_FIELDS, ("submit", "eligible", "start", '"end"'), strict=True)
            if n in m
        ),
        *(
            (
                f,
                r(f.lower()),
                f"(NOT is_step AND {r(f.lower())} NOT IN {_UNLIMITED} AND {q} IS NULL)",
            )
            for f, q in (("Elapsed", "elapsed_raw_s"), ("Timelimit", "time_limit_s"))
            if f.lower() in m
        ),
        *(
            (
                f,
                r(f.lower()),
                f"(NOT is_step AND {r(f.lower())} <> '' AND NOT contains({r(f.lower())}, '='))",
            )
            for f in ("AllocTRES", "ReqTRES")
            if f.lower() in m
        ),
        (
            "Priority",
            r("priority"),
            f"(NOT is_step AND {r('priority')} <> '' AND priority IS NULL)",
        ),
        ("Comment", r("comment"), f"(NOT is_step AND kind_label NOT IN ({kinds}))"),
    ]
    bad_field = " ".join(f"WHEN coalesce({cond}, false) THEN '{name}'" for name, _, cond in checks)
    bad_value = " ".join(f"WHEN '{name}' THEN {val}" for name, val, _ in checks)
    fields = ",\n      ".join(f"{job(expr)} AS {name}" for name, expr in parsed.items())
    return f"""
    WITH raw AS (SELECT {select_raw} FROM {source}),
    p AS (
      SELECT *,
        {jobid} AS raw_id,
        split_part({jobid}, '.', 1) AS job_id,
        contains({jobid}, '.') AS is_step,
        {_time_sql(r("start"), tz)} AS start,
        {fields}
      FROM raw
    ),
    checked AS (SELECT *, CASE {bad_field} ELSE NULL END AS bad_field FROM p)
    SELECT * EXCLUDE ({", ".join(raw_cols.values())})
      {f", CASE bad_field {bad_value} END AS bad_value" if with_values else ""}
    FROM checked {"WHERE bad_field IS NOT NULL" if with_values else ""}
    """


def _fold_sql(source: str) -> str:
    """Steps into their attempt, attempts numbered, columns in the canonical order.

    Nearly every job has one attempt: those get attempt 1 and the count of their steps by a
    plain GROUP BY. Only job ids listed more than once (requeues) are numbered by time and
    get their steps assigned by time range. `parsed` is an Arrow table: each reference is a
    zero-copy scan, so nothing is materialised twice.
    """
    ok_jobs = "parsed WHERE NOT is_step AND bad_field IS NULL"
    ok_steps = "parsed WHERE is_step AND bad_field IS NULL"
    return f"""
    WITH dups AS (SELECT job_id FROM {ok_jobs} GROUP BY job_id HAVING count(*) > 1),
    step_count AS (
      SELECT job_id, CAST(count(*) AS INTEGER) AS steps FROM {ok_steps} GROUP BY job_id
    ),
    single AS (
      SELECT j.*, CAST(1 AS INTEGER) AS attempt, coalesce(c.steps, 0) AS steps
      FROM (SELECT * FROM {ok_jobs}) j
        ANTI JOIN dups USING (job_id)
        LEFT JOIN step_count c USING (job_id)
    ),
    multi AS (
      SELECT j.*, CAST(row_number() OVER (
          PARTITION BY job_id ORDER BY start NULLS LAST, submit NULLS LAST, "end" NULLS LAST,
          state) AS INTEGER) AS attempt
      FROM (SELECT * FROM {ok_jobs}) j SEMI JOIN dups USING (job_id)
    ),
    multi_steps AS (
      SELECT m.job_id, m.attempt, CAST(count(*) AS INTEGER) AS steps
      FROM (SELECT job_id, start FROM {ok_steps}) s JOIN multi m USING (job_id)
      WHERE s.start IS NULL OR m.start IS NULL OR (s.start >= m.start
        AND (m."end" IS NULL OR s.start <= m."end"))
      GROUP BY ALL
    ),
    numbered AS (
      SELECT * FROM single
      UNION ALL BY NAME
      SELECT m.*, coalesce(ms.steps, 0) AS steps
      FROM multi m LEFT JOIN multi_steps ms USING (job_id, attempt)
    )
    SELECT
      {sql.literal(source)} AS source, n.job_id, n.attempt, n.array_job_id, n.chain_id, n.name,
      n.kind_label, n."user", n.team, n.partition,
      -- an attempt with no allocation never ran: its GPU count is unknown, not zero
      CASE WHEN n.start IS NULL OR n.state = 'pending' THEN NULL ELSE n.gpu_count END
        AS gpu_count,
      n.gpu_type, coalesce(n.req_gpus, n.gpu_count) AS req_gpus, n.priority, n.priority_class,
      n.site,
      n.state, n.state_detail, n.exit_code, n.wait_reason,
      n.submit, n.eligible, n.start,
      NULL::TIMESTAMPTZ AS prep_start, NULL::TIMESTAMPTZ AS first_step,
      NULL::TIMESTAMPTZ AS last_checkpoint, n."end",
      CAST(coalesce(epoch(n."end") - epoch(n.start), n.elapsed_raw_s) AS DOUBLE) AS elapsed_s,
      n.time_limit_s, n.steps, n.pending_tasks,
      NULL::VARCHAR AS extras
    FROM numbered n
    """


def _locate_lines(
    path: Path, names: Sequence[str], bad: Iterable[tuple[str, str, str | None]]
) -> dict[tuple[str, str], int]:
    """Line numbers of flagged rows, found by a plain scan (only run when something is bad)."""
    wanted = {(raw_id, fld): val for raw_id, fld, val in bad}
    idx = {n.lower(): i for i, n in reversed(list(enumerate(names)))}
    id_col = idx.get("jobid", idx.get("jobidraw", 0))
    found: dict[tuple[str, str], int] = {}
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        for lineno, text in enumerate(handle, start=1):
            parts = text.rstrip("\r\n").split("|")
            if len(parts) != len(names):
                continue
            raw_id = parts[id_col].strip()
            for (rid, fld), val in wanted.items():
                if rid == raw_id and (rid, fld) not in found:
                    col = idx.get(fld.lower())
                    if col is None or val is None or parts[col].strip() == val:
                        found[(rid, fld)] = lineno
            if len(found) == len(wanted):
                break
    return found


def _describe_bad(field_name: str, value: str | None) -> str:
    shown = repr(value)[:60]
    return {
        "JobID": f"job id {shown} is not a Slurm job id (123, 123_4, 123_[5-9], 123.batch)",
        "State": f"state {shown} is not a Slurm job state",
        "Elapsed": f"duration {shown} is not [DD-[HH:]]MM:SS",
        "Timelimit": f"time limit {shown} is not a Slurm duration",
        "Priority": f"priority {shown} is not an integer",
        "Comment": f"kind label in {shown} is not one of {', '.join(KINDS)}",
    }.get(
        field_name,
        f"value {shown} is not what sacct prints here"
        + (
            " (YYYY-MM-DDTHH:MM:SS, Unknown or None)"
            if field_name in ("Submit", "Eligible", "Start", "End")
            else ""
        ),
    )


def read_sacct(
    path: str | Path,
    *,
    tz: str = "UTC",
    sacct_format: str | None = None,
    skip_bad_rows: bool = False,
) -> ParseResult:
    """Read `sacct --parsable2` output (with or without a header) into canonical attempts.

    Times are read in `tz` (sacct prints local time) and stored in UTC. Job steps are folded
    into their attempt (`steps` counts them); requeue records from `--duplicates` become
    attempts 1, 2, ... of one job. Bad rows raise :class:`InputError` unless `skip_bad_rows`,
    in which case they are returned in `bad_rows`.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError("no such file", path=p, hint="check the path to the sacct output")
    header = _sniff_header(p)
    if header is not None:
        names = header
        if sacct_format is not None and [n.lower() for n in parse_format_list(sacct_format)] != [
            n.lower() for n in names
        ]:
            raise InputError(
                "--sacct-format does not match the header line of the file",
                path=p,
                line=1,
                hint="drop --sacct-format: the header already names the fields",
            )
    elif sacct_format is not None:
        names = parse_format_list(sacct_format)
    else:
        if p.stat().st_size == 0:
            raise InputError("file is empty", path=p, hint="write sacct output into it")
        raise InputError(
            "no sacct header line (field names) at the top", path=p, line=1, hint=_HINT_FORMAT
        )
    mapping = _field_map(names, p)
    columns = "{" + ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(names))) + "}"

    def reader(rejects: bool) -> str:
        return (
            f"read_csv({sql.literal(str(p))}, delim='|', quote='', escape='', "
            f"header={'true' if header is not None else 'false'}, columns={columns}, "
            "auto_detect=false, strict_mode=true, null_padding=false, ignore_errors=true"
            + (
                ", store_rejects=true, rejects_table='rejects', rejects_scan='reject_scans')"
                if rejects
                else ")"
            )
        )

    con = sql.connect()
    # File order is not needed (attempts are ordered by time) and keeping it costs memory.
    con.execute("SET preserve_insertion_order = false")
    con.execute(_DURATION_MACRO)
    try:
        # Arrow, not a DuckDB table: DuckDB would compress every column on insert.
        parsed = con.sql(_build_sql(mapping, tz, reader(True))).to_arrow_table()
        rejects = con.execute(
            "SELECT line, column_name, error_type, error_message FROM rejects ORDER BY line"
        ).fetchall()
        data_lines = parsed.num_rows
        n_flagged = data_lines - parsed.column("bad_field").null_count
        flagged: list[tuple[str, str, str | None]] = []
        if n_flagged:
            # Error path: read the file again to fetch the offending raw text.
            flagged = con.execute(
                "SELECT raw_id, bad_field, bad_value FROM ("
                + _build_sql(mapping, tz, reader(False), with_values=True)
                + ")"
            ).fetchall()
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot read as sacct output: {first}", path=p) from None

    bad: list[BadRow] = []
    for line, column, etype, message in rejects:
        reason = {
            "INVALID ENCODING": "not UTF-8 text",
            "MISSING COLUMNS": f"fewer fields than the {len(names)} in the header",
            "TOO MANY COLUMNS": f"more fields than the {len(names)} in the header "
            "(a '|' inside a job name or comment?)",
        }.get(str(etype), str(message).splitlines()[0])
        col_name = None
        if column and str(column).startswith("c") and str(column)[1:].isdigit():
            col_name = names[int(str(column)[1:])]
        bad.append(BadRow(str(p), int(line), col_name, reason))
    if flagged:
        lines = _locate_lines(p, names, flagged)
        for raw_id, fld, val in flagged:
            bad.append(BadRow(str(p), lines.get((raw_id, fld)), fld, _describe_bad(fld, val)))
    bad.sort(key=lambda b: (b.line is None, b.line or 0))
    if bad and not skip_bad_rows:
        raise bad[0].as_error()
    if data_lines == 0 and not bad:
        raise InputError("no job rows after the header", path=p, hint=RECOMMENDED_COMMAND)

    con.register("parsed", parsed)
    table = con.sql(_fold_sql(str(p))).to_arrow_table()
    con.close()
    return ParseResult(table=table.cast(ATTEMPTS_SCHEMA), bad_rows=bad, data_lines=data_lines)
