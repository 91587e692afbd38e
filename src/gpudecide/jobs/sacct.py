"""Slurm `sacct --parsable2` output into the canonical attempt table.

Parsing runs inside DuckDB (multi-threaded CSV reader, vectorised regex and time parsing), so a
million-job log with its steps stays within seconds. A log without a bad row takes the fast
path (see "The fast path" below); any other is read again by the precise path: rows DuckDB
cannot split into the declared fields come back from its reject table with their line numbers;
rows whose fields do not parse are flagged in SQL, and only then located in the file by a plain
scan (the error path), so every message names file, line and field.

What sacct prints, as seen on a real Slurm 22.05 (see tests/fixtures/sacct/):
- times in the local time zone of the sacct process, `Unknown` or `None` when unset;
- `State` like `CANCELLED by 1234`;
- job steps `123.batch`, `123.extern`, `123.0` after their job; array tasks `123_4` and pending
  ranges `123_[5-9%2]`; heterogeneous components `123+0`;
- with `--duplicates`, a requeued job once per attempt (`REQUEUED`, then the new attempt);
- `AllocTRES` like `billing=2,cpu=2,gres/gpu:h100=2,gres/gpu=2,mem=1000M,node=1`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from gpudecide.errors import InputError
from gpudecide.fsutil import require_regular_file
from gpudecide.jobs import bounds, sql
from gpudecide.jobs.bounds import Reason, reason_text
from gpudecide.jobs.schema import ATTEMPTS_SCHEMA, KINDS, SLURM_COMPACT_STATES, SLURM_STATES
from gpudecide.message import Message, english, message, nmessage

__all__ = [
    "FREE_TEXT_FIELDS",
    "KNOWN_FIELDS",
    "RECOMMENDED_COMMAND",
    "RECOMMENDED_FIELDS",
    "BadRow",
    "FieldRows",
    "ParseResult",
    "describe_bad",
    "fold_field_rows",
    "parse_format_list",
    "read_sacct",
]

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
# sacct's default time format, and the same with a space (SLURM_TIME_FORMAT="%F %T").
_TIME_FORMAT = "'%Y-%m-%dT%H:%M:%S'"
_SPACED_TIME_FORMAT = "'%Y-%m-%d %H:%M:%S'"
_UNSET_TIMES = ("", "Unknown", "None")
# Fields holding free text: when one is last, `|` inside it (which --parsable2 does not
# escape) belongs to it.
FREE_TEXT_FIELDS = frozenset(
    [
        "jobname",
        "comment",
        "admincomment",
        "systemcomment",
        "submitline",
        "workdir",
        "extra",
        "constraints",
        "container",
    ]
)
# NodeList of a job that never got a node (cancelled while pending).
_NO_NODE = "None assigned"
_UNLIMITED = ("", "UNLIMITED", "Partition_Limit", "INVALID", "NONE")


@dataclass
class BadRow:
    """A row that could not be read, with where and why: `template` is a msgid of the
    `errors` catalogue, filled from `values` (shown as written in every language)."""

    path: str
    line: int | None
    field: str | None
    template: str
    values: dict[str, Any] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, path: str, line: int | None, fld: str | None, reason: Reason) -> BadRow:
        """A bad row from a reason function's (template, values)."""
        return cls(path, line, fld, reason[0], dict(reason[1]))

    @property
    def reason(self) -> str:
        """Why the row is bad, in English (the text records and `--json` keep)."""
        return reason_text((self.template, self.values))

    @property
    def message(self) -> Message:
        """Why the row is bad, as a message said in the reader's language. Text the reader
        did not write with fields (a DuckDB message) is passed as a value, so that braces in
        it are never taken for fields."""
        if not self.values and "{" in self.template:
            return message("errors", "{text}", text=self.template)
        return message("errors", self.template, **self.values)

    def as_error(self) -> InputError:
        """The row as the exit-2 error the CLI prints."""
        return InputError(
            self.template,
            path=self.path,
            line=self.line,
            field=self.field,
            hint="fix the row, or pass --skip-bad-rows to count and report such rows",
            **self.values,
        )


@dataclass
class ParseResult:
    """Attempts read from one source plus the rows that had to be skipped."""

    table: pa.Table
    bad_rows: list[BadRow] = field(default_factory=list)
    data_lines: int = 0
    # what a reader of the figures must know about this source, as messages
    note_messages: list[Message] = field(default_factory=list)
    # identical job rows listed more than once (dropped, counted)
    duplicate_rows: int = 0

    @property
    def notes(self) -> list[str]:
        """The notes in English."""
        return [english(m) for m in self.note_messages]


def _sniff_header(path: Path) -> list[str] | None:
    """Field names when the first non-empty line is a sacct header, else None."""
    with open(path, "rb") as handle:
        for raw in handle:
            # a UTF-8 byte order mark (files saved by some editors) is no part of a name
            text = raw.decode("utf-8", errors="replace").strip("\r\n").removeprefix("\ufeff")
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
            "unknown sacct field(s) {names}",
            field="--sacct-format",
            hint="see `sacct --helpformat`",
            names=", ".join(unknown),
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
    if not {"alloctres", "allocgres", "reqtres", "reqgres"} & mapping.keys():
        missing.append("AllocTRES")
    if missing:
        raise InputError(
            "sacct output lacks field(s) {names}",
            path=path,
            line=1,
            hint="re-run it as: {command}",
            names=", ".join(missing),
            command=RECOMMENDED_COMMAND,
        )
    return mapping


def _time_sql(col: str, tz: str) -> str:
    """Local sacct time -> UTC TIMESTAMPTZ; unset words and malformed text -> NULL."""
    # the second format is only tried where the first fails: it costs nothing on logs in
    # the default format
    local = (
        f"coalesce(try_strptime({col}, {_TIME_FORMAT}), try_strptime({col}, {_SPACED_TIME_FORMAT}))"
    )
    return f"CASE WHEN {col} IN {_UNSET_TIMES} THEN NULL ELSE {_utc_sql(local, tz)} END"


def _utc_sql(local: str, tz: str) -> str:
    """A TIMESTAMP of local time in `tz` as the TIMESTAMPTZ instant it names.

    In UTC the instant has the local time's microseconds, so it is rebuilt from them:
    ICU's conversion costs about 0.1 us a value, half a second over the four time columns
    of a million-job log. Every other zone takes ICU's conversion (offsets, DST)."""
    if tz == "UTC":
        return f"make_timestamptz(epoch_us({local}))"
    return f"timezone({sql.literal(tz)}, {local})"


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
        try_cast(split_part(split_part({col}, 'gres/gpu=', 2), ',', 1) AS HUGEINT)
      WHEN contains({col}, 'gres/gpu:') THEN
        CAST(list_sum(list_transform(
          regexp_extract_all({col}, '(?:^|,)gres/gpu:[^=,]+=(\\d+)', 1),
          lambda x: try_cast(x AS HUGEINT))) AS HUGEINT)
      ELSE 0 END"""


def _tres_gpu_type(col: str) -> str:
    """First GPU type named in a TRES string (`gres/gpu:h100=2` -> h100)."""
    return (
        f"CASE WHEN contains({col}, 'gres/gpu:') THEN "
        f"split_part(split_part({col}, 'gres/gpu:', 2), '=', 1) END"
    )


def _gres_gpus(col: str) -> str:
    """Old-style GRES: `gpu:2`, `gpu:tesla:2`, `gpu:P100:2(IDX:0-1)`, `hbm:0,gpu:4` (summed)."""
    return f"""CASE WHEN {col} IS NULL OR {col} = '' THEN NULL
      WHEN regexp_matches({col}, '(^|,)gpu(:[^:,=()]+)?:\\d+') THEN
        CAST(list_sum(list_transform(
          regexp_extract_all({col}, '(?:^|,)gpu(?::[^:,=()]+)?:(\\d+)', 1),
          lambda x: CAST(x AS INTEGER))) AS INTEGER)
      ELSE 0 END"""


def _state_case(col: str) -> str:
    word = f"upper(split_part({col}, ' ', 1))"
    words = {**SLURM_STATES, **{k: SLURM_STATES[v] for k, v in SLURM_COMPACT_STATES.items()}}
    arms = " ".join(f"WHEN '{k}' THEN '{v}'" for k, v in words.items())
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
        "reqgres",
        "nodelist",
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


def _gpu_parts(m: dict[str, str], r: Callable[[str], str]) -> dict[str, str]:
    """GPU counts per source field, each null when its field is absent or empty (F1).

    ReqTRES mostly repeats AllocTRES: it is parsed only when it says something else.
    """
    parts = {}
    if "alloctres" in m:
        parts["alloc_tres_gpus"] = _tres_gpus(r("alloctres"))
    if "allocgres" in m:
        parts["alloc_gres_gpus"] = _gres_gpus(r("allocgres"))
    if "reqtres" in m:
        parts["req_tres_gpus"] = (
            f"CASE WHEN {r('reqtres')} = {r('alloctres')} THEN {parts['alloc_tres_gpus']} "
            f"ELSE {_tres_gpus(r('reqtres'))} END"
            if "alloctres" in m
            else _tres_gpus(r("reqtres"))
        )
    if "reqgres" in m:
        parts["req_gres_gpus"] = _gres_gpus(r("reqgres"))
    return parts


# The GPU count of an attempt: what it was allocated, else what it asked for (old GRES last).
_GPU_ORDER = (
    ("alloc_tres_gpus", "AllocTRES"),
    ("alloc_gres_gpus", "AllocGRES"),
    ("req_tres_gpus", "ReqTRES"),
    ("req_gres_gpus", "ReqGRES"),
)
# A dictionary column: four words on millions of rows cost next to nothing.
_SOURCE_ENUM = f"ENUM ({', '.join(repr(n) for _, n in _GPU_ORDER)})"


def _gpu_sql(present: Sequence[str]) -> tuple[str, str, str]:
    """Count, source and request over the GPU parts the log has (others are not computed)."""
    order = [(c, n) for c, n in _GPU_ORDER if c in present]
    if not order:
        return "NULL::HUGEINT", "NULL", "NULL::HUGEINT"
    count = f"coalesce({', '.join(c for c, _ in order)})"
    source = "CASE " + " ".join(f"WHEN {c} IS NOT NULL THEN '{n}'" for c, n in order) + " END"
    req = [c for c, _ in order if c.startswith("req_")]
    return count, source, (f"coalesce({', '.join(req)})" if req else "NULL::HUGEINT")


def _never_ran_sql(m: dict[str, str], r: Callable[[str], str]) -> str:
    """A job row that never got a node (cancelled while pending, or still pending).

    sacct prints `NodeList` "None assigned" for it; newer Slurm versions also print Start =
    End = the cancel time and Elapsed 0 (issue: such jobs counted as started). Without a
    NodeList field, a cancelled row with Start = End and no elapsed time is taken as one.
    """
    # Start = End first: it rules out nearly every row before any text is compared.
    if "nodelist" in m:
        return f"(start_ts = \"end\" AND NOT is_step AND {r('nodelist')} = '{_NO_NODE}')"
    return (
        "(start_ts = \"end\" AND NOT is_step AND state = 'cancelled' "
        "AND coalesce(elapsed_raw_s, 0) = 0)"
    )


def _ts_bound(q: str) -> str:
    return (
        f"({q} < TIMESTAMPTZ '{bounds.EARLIEST.isoformat()}' "
        f"OR {q} >= TIMESTAMPTZ '{bounds.LATEST.isoformat()}')"
    )


def _checks(m: dict[str, str], r: Callable[[str], str], jobid: str) -> list[tuple[str, str, str]]:
    """(field code, raw text, condition) of every per-row check, first failing one wins."""
    kinds = ", ".join(f"'{k}'" for k in KINDS)
    max_run_us = bounds.MAX_RUN // timedelta(microseconds=1)
    times = [
        (n, q)
        for n, q in zip(_TIME_FIELDS, ("submit", "eligible", "start_ts", '"end"'), strict=True)
        if n in m
    ]
    return [
        ("JobID", jobid, f"NOT regexp_full_match({jobid}, '{_JOBID_RE}')"),
        ("State", r("state"), "(NOT is_step AND state IS NULL)"),
        *(
            (
                n.capitalize(),
                r(n),
                f"({'' if n == 'start' else 'NOT is_step AND '}"
                f"{r(n)} NOT IN {_UNSET_TIMES} AND ({q} IS NULL OR {_ts_bound(q)}))",
            )
            for n, q in times
        ),
        ("End:before", r("end"), '(NOT is_step AND "end" < start_ts)'),
        (
            "End:long",
            r("end"),
            # in microseconds: the same test as `start_ts + INTERVAL`, without calendar arithmetic
            f'(NOT is_step AND epoch_us("end") - epoch_us(start_ts) > {max_run_us})',
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
            "GPUs",
            "gpu_source_text || ' ' || CAST(gpu_raw AS VARCHAR)",
            f"(NOT is_step AND (gpu_raw > {bounds.MAX_GPU_COUNT} OR gpu_raw < 0))",
        ),
        (
            "Priority",
            r("priority"),
            f"(NOT is_step AND {r('priority')} <> '' AND priority IS NULL)",
        ),
        ("Comment", r("comment"), f"(NOT is_step AND kind_label NOT IN ({kinds}))"),
    ]


@dataclass(frozen=True)
class _Raw:
    """The raw text columns a parse reads: the sacct field -> `r_<field>` column, the SELECT
    that names them, and the job id column."""

    cols: dict[str, str]
    select: str
    jobid: str

    def r(self, name: str) -> str:
        """The raw column of a field, or a NULL text when the log lacks it."""
        return self.cols.get(name, "NULL::VARCHAR")


def _raw_columns(m: dict[str, str]) -> _Raw:
    used = m.keys() & _USED_FIELDS
    if "jobid" in m:
        used -= {"jobidraw"}
    cols = {name: f"r_{name}" for name in sorted(used)}
    select = ", ".join(f"{m[name]} AS {col}" for name, col in cols.items())
    jobid = cols["jobid"] if "jobid" in m else cols.get("jobidraw", "NULL::VARCHAR")
    return _Raw(cols, select, jobid)


def _field_sql(m: dict[str, str], tz: str, raw: _Raw) -> dict[str, str]:
    """Column -> SQL of every job field, over the raw columns (steps leave them null)."""
    r, jobid = raw.r, raw.jobid
    tres_col = r("alloctres") if "alloctres" in m else r("reqtres")
    return {
        "array_job_id": f"nullif(regexp_extract({jobid}, '^(\\d+)_', 1), '')",
        "pending_tasks": f"CASE WHEN contains({jobid}, '_[') THEN {_count_range_sql(jobid)} END",
        "name": f"nullif({r('jobname')}, '')",
        '"user"': f"nullif({r('user')}, '')",
        "team": f"nullif({r('account')}, '')",
        "partition": f"nullif({r('partition')}, '')",
        **_gpu_parts(m, r),
        "gpu_type": _tres_gpu_type(tres_col),
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
        # the hosts an attempt ran on, kept for the joins by host and time (marks)
        "node": f"CASE WHEN trim({r('nodelist')}) IN ('', '{_NO_NODE}') THEN NULL "
        f"ELSE trim({r('nodelist')}) END",
    }


def _gpu_columns(m: dict[str, str], r: Callable[[str], str], parsed: Sequence[str]) -> str:
    """GPU count, its source and the request, over the GPU parts of `parsed`."""
    gpu_count, gpu_source, req = _gpu_sql([c for c, _ in _GPU_ORDER if c in parsed])
    return f"{gpu_count} AS gpu_raw, {gpu_source} AS gpu_source_text, " + (
        f"try_cast({req} AS INTEGER) AS req_gpus"
    )


def _build_sql(m: dict[str, str], tz: str, source: str, *, with_values: bool = False) -> str:
    """SELECT that parses every row; `bad_field` names the first field that did not parse.

    Step rows only need their job id and start, so everything else is skipped for them.
    `with_values` adds the offending raw text (used on the error path only).
    """
    raw = _raw_columns(m)
    r, jobid = raw.r, raw.jobid

    def job(expr: str) -> str:
        return f"CASE WHEN is_step THEN NULL ELSE {expr} END"

    parsed = _field_sql(m, tz, raw)
    checks = _checks(m, r, jobid)
    bad_field = " ".join(f"WHEN coalesce({cond}, false) THEN '{name}'" for name, _, cond in checks)
    bad_value = " ".join(f"WHEN '{name}' THEN {val}" for name, val, _ in checks)
    fields = ",\n      ".join(f"{job(expr)} AS {name}" for name, expr in parsed.items())
    gpu_parts = [c for c, _ in _GPU_ORDER if c in parsed]
    helper_cols = [*gpu_parts, "gpu_raw", "gpu_source_text", "start_ts", *raw.cols.values()]
    return f"""
    WITH raw AS (SELECT {raw.select} FROM {source}),
    p AS (
      SELECT *,
        {jobid} AS raw_id,
        split_part({jobid}, '.', 1) AS job_id,
        contains({jobid}, '.') AS is_step,
        {_time_sql(r("start"), tz)} AS start_ts,
        {fields}
      FROM raw
    ),
    g AS (SELECT *, {_gpu_columns(m, r, gpu_parts)} FROM p),
    checked AS (
      SELECT *,
        CASE {bad_field} ELSE NULL END AS bad_field,
        CASE WHEN coalesce({_never_ran_sql(m, r)}, false) THEN NULL ELSE start_ts END AS start,
        -- out-of-range counts flag the row (bad_field) and become null here
        try_cast(gpu_raw AS INTEGER) AS gpu_count,
        CAST(gpu_source_text AS {_SOURCE_ENUM}) AS gpu_source
      FROM g
    )
    SELECT * EXCLUDE ({", ".join(helper_cols)})
      {f", CASE bad_field {bad_value} END AS bad_value" if with_values else ""}
    FROM checked {"WHERE bad_field IS NOT NULL" if with_values else ""}
    """


_ATTEMPT_ORDER = 'start NULLS LAST, submit NULLS LAST, "end" NULLS LAST, state'


# Rows without a problem: jobs (attempts) and their steps.
_OK_JOBS = "parsed WHERE NOT is_step AND bad_field IS NULL"
_OK_STEPS = "parsed WHERE is_step AND bad_field IS NULL"


def _single_attempt_ctes() -> str:
    """Job ids listed once: attempt 1, steps counted by a plain GROUP BY."""
    ok_jobs, ok_steps = _OK_JOBS, _OK_STEPS
    return f"""dups AS (SELECT job_id FROM {ok_jobs} GROUP BY job_id HAVING count(*) > 1),
    step_count AS (
      SELECT job_id, CAST(count(*) AS INTEGER) AS steps FROM {ok_steps} GROUP BY job_id
    ),
    single AS (
      SELECT j.*, CAST(1 AS INTEGER) AS attempt, coalesce(c.steps, 0) AS steps
      FROM (SELECT * FROM {ok_jobs}) j
        ANTI JOIN dups USING (job_id)
        LEFT JOIN step_count c USING (job_id)
    )"""


def _multi_attempt_ctes() -> str:
    """Job ids listed more than once: attempts numbered by time, steps assigned by range."""
    ok_jobs, ok_steps = _OK_JOBS, _OK_STEPS
    return f"""-- Rows of one id are attempts of one job until one ends for good (completed, failed,
    -- cancelled, timeout): a later row is then another job under a reused id (accounting
    -- reset), told apart as ID#2, ID#3. Ids of several clusters become ID@cluster.
    multi_rows AS (
      SELECT j.*, job_id AS base_id,
        lag(state) OVER w IN ('completed', 'failed', 'cancelled', 'timeout') AS after_final,
        count(DISTINCT site) OVER (PARTITION BY job_id) > 1 AS multi_site
      FROM (SELECT DISTINCT * FROM {ok_jobs} AND job_id IN (SELECT job_id FROM dups)) j
      WINDOW w AS (PARTITION BY job_id, site ORDER BY {_ATTEMPT_ORDER})
    ),
    multi_gen AS (
      SELECT * REPLACE (
        base_id || CASE WHEN multi_site THEN '@' || site ELSE '' END
          || CASE WHEN gen > 0 THEN '#' || CAST(gen + 1 AS VARCHAR) ELSE '' END AS job_id)
      FROM (SELECT *, sum(CASE WHEN after_final THEN 1 ELSE 0 END) OVER (
          PARTITION BY job_id, site ORDER BY {_ATTEMPT_ORDER}
          ROWS UNBOUNDED PRECEDING) AS gen FROM multi_rows)
    ),
    multi AS (
      SELECT * EXCLUDE (after_final, multi_site, gen),
        CAST(row_number() OVER (PARTITION BY job_id ORDER BY {_ATTEMPT_ORDER}) AS INTEGER)
          AS attempt
      FROM multi_gen
    ),
    multi_steps AS (
      SELECT m.job_id, m.attempt, CAST(count(*) AS INTEGER) AS steps
      FROM (SELECT DISTINCT job_id AS base_id, raw_id, start FROM {ok_steps}
            AND job_id IN (SELECT job_id FROM dups)) s
        JOIN multi m USING (base_id)
      WHERE s.start IS NULL OR m.start IS NULL OR (s.start >= m.start
        AND (m."end" IS NULL OR s.start <= m."end"))
      GROUP BY ALL
    )"""


def _canonical_select(source: str, eligible: str, extra: str = "") -> str:
    """The numbered attempts in the canonical columns and order (`extra`: more columns)."""
    return f"""SELECT
      {sql.literal(source)} AS source, n.job_id, n.attempt, n.array_job_id, n.chain_id, n.name,
      n.kind_label, n."user", n.team, n.partition,
      -- an attempt with no allocation never ran: its GPU count is unknown, not zero
      CASE WHEN n.start IS NULL OR n.state = 'pending' THEN NULL
        ELSE CAST(n.gpu_count AS INTEGER) END AS gpu_count,
      n.gpu_type, CAST(coalesce(n.req_gpus, n.gpu_count) AS INTEGER) AS req_gpus, n.priority,
      n.priority_class,
      n.site,
      n.state, n.state_detail, n.exit_code, n.wait_reason,
      n.submit, {eligible} AS eligible, n.start,
      NULL::TIMESTAMPTZ AS prep_start, NULL::TIMESTAMPTZ AS first_step,
      NULL::TIMESTAMPTZ AS last_checkpoint, n."end",
      CAST(CASE WHEN n.start IS NULL THEN 0 ELSE
        coalesce(epoch(n."end") - epoch(n.start), n.elapsed_raw_s) END AS DOUBLE) AS elapsed_s,
      n.time_limit_s, n.steps, n.pending_tasks,
      -- NodeList as {{"node": "gpu[01-04]"}}: the hosts of the attempt (marks join by host)
      CASE WHEN n.node IS NULL THEN NULL
        ELSE CAST(json_object('node', n.node) AS VARCHAR) END AS extras,
      CAST(n.gpu_source AS VARCHAR) AS gpu_source{extra}
    FROM numbered n"""


def _fold_sql(source: str, eligible_fallback: bool) -> str:
    """Steps into their attempt, attempts numbered, columns in the canonical order.

    Nearly every job has one attempt: those get attempt 1 and the count of their steps by a
    plain GROUP BY. Only job ids listed more than once (requeues, or the same rows listed
    twice) go the long way: identical rows are kept once, the rest numbered by time, and
    their steps assigned by time range. `parsed` is an Arrow table: each reference is a
    zero-copy scan, so nothing is materialised twice. With `eligible_fallback`, an attempt
    that started but whose Eligible is Unknown waits from its Submit.
    """
    eligible = (
        "CASE WHEN n.eligible IS NULL AND n.start IS NOT NULL THEN n.submit ELSE n.eligible END"
        if eligible_fallback
        else "n.eligible"
    )
    return f"""
    WITH {_single_attempt_ctes()},
    {_multi_attempt_ctes()},
    numbered AS (
      SELECT * FROM single
      UNION ALL BY NAME
      SELECT m.* EXCLUDE (base_id), coalesce(ms.steps, 0) AS steps
      FROM multi m LEFT JOIN multi_steps ms USING (job_id, attempt)
    )
    {_canonical_select(source, eligible)}
    """


def _overlaps_sql(tz: str) -> str:
    """Attempts of one job id that start before the previous attempt ended.

    Attempts of one job never overlap in time: rows that do belong to different jobs under
    one id (ids reused after an accounting reset, logs of two clusters mixed). Only ids with
    a second attempt are looked at. Start comes back as sacct printed it, to find the line.
    """
    return f"""
    WITH m AS (
      SELECT job_id, start, "end" FROM folded
      WHERE job_id IN (SELECT job_id FROM folded WHERE attempt > 1) AND start IS NOT NULL
    ),
    w AS (
      SELECT *, lag(start) OVER x AS prev_start, lag("end") OVER x AS prev_end
      FROM m WINDOW x AS (PARTITION BY job_id ORDER BY start, "end")
    )
    SELECT job_id,
      strftime(timezone({sql.literal(tz)}, start), '%Y-%m-%dT%H:%M:%S') AS start_text,
      strftime(timezone({sql.literal(tz)}, prev_start), '%Y-%m-%dT%H:%M:%S') AS prev_text,
      start
    FROM w WHERE prev_end IS NOT NULL AND start < prev_end
    """


def _split_line(text: str, n: int, free_last: bool) -> list[str]:
    """Fields of one line; extra separators belong to a free-text last field."""
    return text.split("|", n - 1) if free_last else text.split("|")


def _locate_lines(
    path: Path,
    names: Sequence[str],
    bad: Iterable[tuple[str, str, str | None]],
) -> tuple[dict[tuple[str, str], int], set[int]]:
    """Line numbers of flagged rows, found by a plain scan (only run when something is bad),
    and which of those lines hold more separators than fields (read shifted)."""
    wanted = {(raw_id, fld): val for raw_id, fld, val in bad}
    idx = {n.lower(): i for i, n in reversed(list(enumerate(names)))}
    id_col = idx.get("jobid", idx.get("jobidraw", 0))
    free_last = names[-1].lower() in FREE_TEXT_FIELDS
    found: dict[tuple[str, str], int] = {}
    crowded: set[int] = set()
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        for lineno, text in enumerate(handle, start=1):
            parts = _split_line(text.rstrip("\r\n"), len(names), free_last)
            if len(parts) != len(names):
                continue
            raw_id = parts[id_col].strip()
            for (rid, fld), val in wanted.items():
                # Both sides stripped alike: Python's strip() also removes \f and \v, which
                # the SQL side keeps in the flagged value.
                if rid.strip() == raw_id and (rid, fld) not in found:
                    col = idx.get(fld.split(":")[0].lower())
                    if (
                        col is None
                        or val is None
                        or parts[col].strip().replace(" ", "T") == val.strip().replace(" ", "T")
                    ):
                        found[(rid, fld)] = lineno
                        if text.count("|") >= len(names):
                            crowded.add(lineno)
            if len(found) == len(wanted):
                break
    return found, crowded


def _time_reason(field_name: str, value: str | None) -> Reason:
    """Why a time field is bad: out of range (bounds), or not a time sacct prints."""
    shown = repr(value)[:60]
    for fmt in ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"):
        try:
            stamp = datetime.strptime(str(value), fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
        problem = bounds.stamp_problem(stamp)
        if problem:
            return (
                "{column} {date} is outside {first}-{last}, not a time a job ran",
                {"column": field_name.lower(), **problem[1]},
            )
    return (
        "value {shown} is not what sacct prints here (YYYY-MM-DDTHH:MM:SS, Unknown or None; a "
        "site's SLURM_TIME_FORMAT changes how sacct prints times: run it with "
        "SLURM_TIME_FORMAT=standard)",
        {"shown": shown},
    )


def describe_bad(field_name: str, value: str | None) -> Reason:
    """Why a field that failed a row check is bad (`field_name` as the checks name it:
    a sacct field, or `End:before`, `End:long`); other readers of Slurm accounting reuse it."""
    shown = repr(value)[:60]
    if field_name in ("Submit", "Eligible", "Start", "End"):
        return _time_reason(field_name, value)
    values: dict[str, Any] = {"shown": shown}
    return {
        "JobID": (
            "job id {shown} is not a Slurm job id (123, 123_4, 123_[5-9], 123.batch)",
            values,
        ),
        "State": (
            "state {shown} is not a Slurm job state of 22.05-26.05 (`sacct --helpstate` "
            "lists them); if a newer Slurm prints it, its rows can be counted and listed apart",
            values,
        ),
        "End:before": ("end {shown} is before start", values),
        "End:long": (
            "end {shown} is more than {days} days after start",
            {**values, "days": bounds.MAX_RUN.days},
        ),
        "Elapsed": ("duration {shown} is not [DD-[HH:]]MM:SS", values),
        "Timelimit": ("time limit {shown} is not a Slurm duration", values),
        "Priority": ("priority {shown} is not an integer", values),
        "Comment": (
            "kind label in {shown} is not one of {kinds}",
            {**values, "kinds": ", ".join(KINDS)},
        ),
    }.get(field_name, ("value {shown} is not what sacct prints here", values))


def _names_of(p: Path, sacct_format: str | None) -> tuple[list[str], bool]:
    """Field names (from the header, else --sacct-format) and whether a header is there."""
    header = _sniff_header(p)
    if header is not None:
        if sacct_format is not None and [n.lower() for n in parse_format_list(sacct_format)] != [
            n.lower() for n in header
        ]:
            raise InputError(
                "--sacct-format does not match the header line of the file",
                path=p,
                line=1,
                hint="drop --sacct-format: the header already names the fields",
            )
        return header, True
    if sacct_format is not None:
        return parse_format_list(sacct_format), False
    if p.stat().st_size == 0:
        raise InputError("file is empty", path=p, hint="write sacct output into it")
    raise InputError(
        "no sacct header line (field names) at the top", path=p, line=1, hint=_HINT_FORMAT
    )


def _reader(p: Path, n: int, header: bool, rejects: bool) -> str:
    columns = "{" + ", ".join(f"'c{i}': 'VARCHAR'" for i in range(n)) + "}"
    return (
        f"read_csv({sql.literal(str(p))}, delim='|', quote='', escape='', "
        f"header={'true' if header else 'false'}, columns={columns}, "
        "auto_detect=false, strict_mode=true, null_padding=false, ignore_errors=true"
        + (
            ", store_rejects=true, rejects_table='rejects', rejects_scan='reject_scans')"
            if rejects
            else ")"
        )
    )


@dataclass
class _Repaired:
    """Rejected lines that could be read after all: Latin-1 text, `|` in the last field."""

    rows: pa.Table | None
    lines: set[int]
    notes: list[Message]
    # job id -> line of rows that had more separators than fields
    piped: dict[str, int] = field(default_factory=dict)


def _repair(p: Path, names: Sequence[str], rejects: list[tuple[Any, ...]]) -> _Repaired:
    """Re-read lines DuckDB rejected for their encoding or for `|` in a free-text last field."""
    free_last = names[-1].lower() in FREE_TEXT_FIELDS
    wanted = {
        int(line)
        for line, _, etype, _ in rejects
        if etype == "INVALID ENCODING" or (etype == "TOO MANY COLUMNS" and free_last)
    }
    if not wanted:
        return _Repaired(None, set(), [])
    id_col = next((i for i, n in enumerate(names) if n.lower() in ("jobid", "jobidraw")), 0)
    columns: list[list[str]] = [[] for _ in names]
    latin: list[int] = []
    piped: dict[str, int] = {}
    done: set[int] = set()
    with open(p, "rb") as handle:
        for lineno, raw in enumerate(handle, start=1):
            if lineno not in wanted:
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("latin-1")
                latin.append(lineno)
            text = text.rstrip("\r\n")
            parts = _split_line(text, len(names), free_last)
            if len(parts) != len(names):
                continue
            if text.count("|") >= len(names):
                piped[parts[id_col].strip()] = lineno
            for i, part in enumerate(parts):
                columns[i].append(part)
            done.add(lineno)
    notes = []
    if latin:
        notes.append(
            nmessage(
                "jobs",
                "{n:num} row of {file} is not UTF-8: read as Latin-1 (line(s) {lines})",
                "{n:num} rows of {file} are not UTF-8: read as Latin-1 (line(s) {lines})",
                n=len(latin),
                file=p.name,
                lines=", ".join(map(str, latin[:10])),
            )
        )
    if piped:
        notes.append(
            nmessage(
                "jobs",
                "{n:num} row of {file} has '|' inside the last field ({column}): kept as part of "
                "it (line(s) {lines})",
                "{n:num} rows of {file} have '|' inside the last field ({column}): kept as part of "
                "it (line(s) {lines})",
                n=len(piped),
                file=p.name,
                column=names[-1],
                lines=", ".join(map(str, list(piped.values())[:10])),
            )
        )
    table = pa.table({f"c{i}": pa.array(col, pa.string()) for i, col in enumerate(columns)})
    return _Repaired(table if done else None, done, notes, piped)


def _fewer_problem(names: Sequence[str], header: bool) -> Reason:
    """A row with fewer fields than the header (or --sacct-format) names."""
    n = {"n": len(names)}
    if header:
        return ("fewer fields than the {n} in the header", n)
    return ("fewer fields than the {n} of --sacct-format", n)


def _reject_rows(
    p: Path, names: Sequence[str], header: bool, rejects: list[tuple[Any, ...]], skip: set[int]
) -> list[BadRow]:
    bad = []
    for line, column, etype, text in rejects:
        if int(line) in skip:
            continue
        reasons: dict[str, Reason] = {
            "INVALID ENCODING": ("not UTF-8 text", {}),
            "MISSING COLUMNS": _fewer_problem(names, header),
            "TOO MANY COLUMNS": _crowded(names, header),
        }
        # DuckDB's own words for any other fault: a finished text, no fields of ours.
        reason = reasons.get(str(etype), (str(text).splitlines()[0], {}))
        col_name = None
        if column and str(column).startswith("c") and str(column)[1:].isdigit():
            col_name = names[int(str(column)[1:])]
        bad.append(BadRow.of(str(p), int(line), col_name, reason))
    return bad


def _flagged_rows(
    p: Path, names: Sequence[str], header: bool, flagged: list[tuple[str, str, str | None]]
) -> list[BadRow]:
    lines, crowded = _locate_lines(p, names, flagged)
    bad = []
    for raw_id, code, val in flagged:
        line = lines.get((raw_id, code))
        if line in crowded:
            # DuckDB takes a trailing empty field as a trailing separator: such a row is read
            # shifted, and its first odd field is not the problem.
            bad.append(BadRow.of(str(p), line, None, _crowded(names, header)))
            continue
        fld = code.split(":")[0]
        if code == "GPUs" and val:
            fld, _, value = val.partition(" ")
            bad.append(
                BadRow(
                    str(p),
                    line,
                    fld,
                    "{value} GPUs is not one job's count (0-{most})",
                    {"value": value, "most": bounds.MAX_GPU_COUNT},
                )
            )
        else:
            bad.append(BadRow.of(str(p), line, fld, describe_bad(code, val)))
    return bad


def _crowded(names: Sequence[str], header: bool) -> Reason:
    """A row with more fields than the header (or --sacct-format) names."""
    n = {"n": len(names)}
    if header:
        return ("more fields than the {n} in the header (a '|' inside a job name or comment?)", n)
    return ("more fields than the {n} of --sacct-format (a '|' inside a job name or comment?)", n)


@dataclass
class _Parsed:
    table: pa.Table
    bad: list[BadRow]
    notes: list[Message]


def _parse(
    con: duckdb.DuckDBPyConnection,
    p: Path,
    names: list[str],
    header: bool,
    tz: str,
) -> _Parsed:
    """Every row parsed and checked in SQL; rejected and flagged rows as BadRows."""
    mapping = _field_map(names, p)
    try:
        # Arrow, not a DuckDB table: DuckDB would compress every column on insert.
        parsed = con.sql(_build_sql(mapping, tz, _reader(p, len(names), header, True)))
        table = parsed.to_arrow_table()
        rejects = con.execute(
            "SELECT line, column_name, error_type, error_message FROM rejects ORDER BY line"
        ).fetchall()
        repaired = _repair(p, names, rejects)
        sources = [_reader(p, len(names), header, False)]
        if repaired.rows is not None:
            con.register("repaired_rows", repaired.rows)
            extra = con.sql(_build_sql(mapping, tz, "repaired_rows")).to_arrow_table()
            table = pa.concat_tables([table, extra.cast(table.schema)])
            sources.append("repaired_rows")
        flagged: list[tuple[str, str, str | None]] = []
        if table.num_rows - table.column("bad_field").null_count:
            # Error path: read the rows again to fetch the offending raw text.
            for source in sources:
                flagged += con.execute(
                    "SELECT raw_id, bad_field, bad_value FROM ("
                    + _build_sql(mapping, tz, source, with_values=True)
                    + ")"
                ).fetchall()
        # A row with extra separators that does not parse with them in its last field had
        # them elsewhere: it is reported as the row with too many fields it is.
        misread = [f for f in flagged if f[0].split(".")[0] in repaired.piped]
        flagged = [f for f in flagged if f not in misread]
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError("cannot read as sacct output: {first}", path=p, first=first) from None
    bad = _reject_rows(p, names, header, rejects, repaired.lines)
    bad += [
        BadRow.of(str(p), line, None, _crowded(names, header))
        for line in sorted({repaired.piped[f[0].split(".")[0]] for f in misread})
    ]
    if flagged:
        bad += _flagged_rows(p, names, header, flagged)
    return _Parsed(table, bad, repaired.notes)


def _fold(
    con: duckdb.DuckDBPyConnection,
    p: Path,
    names: list[str],
    parsed: pa.Table,
    tz: str,
) -> tuple[pa.Table, int, list[BadRow]]:
    """Fold steps and attempts; return the table, duplicate rows dropped, overlapping rows."""
    eligible_fallback = "eligible" in {n.lower() for n in names}
    con.register("parsed", parsed)
    folded = con.sql(_fold_sql(str(p), eligible_fallback)).to_arrow_table()
    con.register("folded", folded)
    overlaps = con.execute(_overlaps_sql(tz)).fetchall()
    bad: list[BadRow] = []
    if overlaps:
        lines, _ = _locate_lines(p, names, [(j, "Start", text) for j, text, _, _ in overlaps])
        for job_id, text, prev, _ in overlaps:
            bad.append(
                BadRow(
                    str(p),
                    lines.get((job_id, "Start")),
                    "Start",
                    "job {job_id} starts again at {text} while its attempt from {prev} still "
                    "ran: attempts of one job never overlap (a job id reused after an "
                    "accounting reset, or two clusters' logs in one file? give each its "
                    "own file)",
                    {"job_id": job_id, "text": text, "prev": prev},
                )
            )
        con.register(
            "overlapping",
            pa.table({"job_id": [o[0] for o in overlaps], "start": [o[3] for o in overlaps]}),
        )
        parsed = con.sql(
            "SELECT p.* REPLACE (CASE WHEN o.job_id IS NOT NULL THEN 'Start' ELSE p.bad_field "
            "END AS bad_field) FROM parsed p LEFT JOIN overlapping o "
            "ON NOT p.is_step AND p.job_id = o.job_id AND p.start = o.start"
        ).to_arrow_table()
        con.register("parsed", parsed)
        folded = con.sql(_fold_sql(str(p), eligible_fallback)).to_arrow_table()
    ok_jobs = con.execute(
        "SELECT count(*) FROM parsed WHERE NOT is_step AND bad_field IS NULL"
    ).fetchall()[0][0]
    return folded, int(ok_jobs) - folded.num_rows, bad


# -- The fast path -------------------------------------------------------------------------
# A log without a bad row is read in a few narrow passes instead of one wide parse. The rows
# are read once into a table that holds what every row needs (job id, step or job, start)
# and, for job rows only, their raw fields packed in one list: steps, most of a log, cost
# three columns, not thirty. The job rows are then parsed with the expressions of
# `_build_sql`, except that the fields a log repeats on many rows (states, durations, TRES,
# comments) are parsed once per distinct text and joined back, and every check of the
# precise path runs on them. A row DuckDB rejects, one that fails a check or attempts that
# overlap send the whole file to the precise path (`_parse`, `_fold`), whose messages name
# file, line and field.

# group -> (the sacct fields it reads, the parsed columns it gives, the checks it runs)
_DISTINCT_GROUPS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "state": (("state",), ("state", "state_detail"), ("State",)),
    "elapsed": (("elapsed",), ("elapsed_raw_s",), ("Elapsed",)),
    "timelimit": (("timelimit",), ("time_limit_s",), ("Timelimit",)),
    "gpus": (
        ("alloctres", "allocgres", "reqtres", "reqgres"),
        ("gpu_type", "gpu_count", "gpu_source", "req_gpus"),
        ("AllocTRES", "ReqTRES", "GPUs"),
    ),
    "comment": (("comment",), ("kind_label", "chain_id"), ("Comment",)),
}
_GROUP_CHECKS = frozenset(c for _, _, checks in _DISTINCT_GROUPS.values() for c in checks)
_GROUP_FIELDS = frozenset(
    [
        *(f for _, fields, _ in _DISTINCT_GROUPS.values() for f in fields),
        *(part for part, _ in _GPU_ORDER),
    ]
)
_ROWS = "sacct_rows"
_JOB_TEXT = "sacct_job_text"
_DISTINCT = "sacct_distinct_texts"


def _any_check(checks: Iterable[tuple[str, str, str]]) -> str:
    """Whether any of the checks fails (a check whose condition is NULL passes)."""
    conds = [f"coalesce({cond}, false)" for _, _, cond in checks]
    return " OR ".join(conds) if conds else "false"


def _packed(m: dict[str, str]) -> tuple[_Raw, _Raw]:
    """The raw columns as the row table reads them from the file, and as the job rows
    give them back from their packed list (`f`; the job id is the row's `job_id`)."""
    raw = _raw_columns(m)
    names = [n for n in raw.cols if raw.cols[n] != raw.jobid]
    cols = {n: f"f[{i}]" for i, n in enumerate(names, start=1)}
    select = ", ".join(f"{cols[n]} AS {raw.cols[n]}" for n in names)
    unpacked = {n: raw.cols[n] for n in names}
    id_field = next(n for n, c in raw.cols.items() if c == raw.jobid)
    unpacked[id_field] = raw.jobid
    return raw, _Raw(unpacked, f"job_id AS {raw.jobid}, {select}", raw.jobid)


def _local_time_sql(col: str) -> str:
    """sacct time text -> local TIMESTAMP (`_time_sql` before its time zone)."""
    return (
        f"CASE WHEN {col} IN {_UNSET_TIMES} THEN NULL ELSE coalesce("
        f"try_strptime({col}, {_TIME_FORMAT}), try_strptime({col}, {_SPACED_TIME_FORMAT})) END"
    )


def _rows_sql(m: dict[str, str], source: str) -> str:
    """Every row once: job id, step or job, start as local time, the rest of a step's id,
    a job row's raw fields packed in `f`, and whether its job id or (for a step) its start
    failed a check.

    A step's start is checked against bounds a day inside EARLIEST and LATEST, which no time
    zone moves it across; a start nearer the bounds is left to the precise path. A job row's
    own checks run when it is parsed (`_jobs_sql`)."""
    raw, packed = _packed(m)
    start = raw.r("start")
    early = f"{bounds.EARLIEST + timedelta(days=1):%Y-%m-%d %H:%M:%S}"
    late = f"{bounds.LATEST - timedelta(days=1):%Y-%m-%d %H:%M:%S}"
    step_start = (
        f"(is_step AND {start} NOT IN {_UNSET_TIMES} AND (start_local IS NULL "
        f"OR start_local < TIMESTAMP '{early}' OR start_local >= TIMESTAMP '{late}'))"
    )
    id_check = [c for c in _checks(m, raw.r, raw.jobid) if c[0] == "JobID"]
    fields = [raw.cols[n] for n in packed.cols if packed.cols[n] != raw.jobid]
    return f"""
    WITH raw AS (SELECT {raw.select} FROM {source}),
    p AS (
      SELECT *,
        split_part({raw.jobid}, '.', 1) AS job_id,
        contains({raw.jobid}, '.') AS is_step,
        {_local_time_sql(start)} AS start_local
      FROM raw
    )
    SELECT job_id, is_step,
      CASE WHEN is_step THEN substr({raw.jobid}, length(job_id) + 2) END AS step_suffix,
      start_local,
      CASE WHEN is_step THEN NULL ELSE [{", ".join(fields)}] END AS f,
      {_any_check([*id_check, ("Start", start, step_start)])} AS row_bad
    FROM p
    """


def _group_keys(m: dict[str, str]) -> list[str]:
    """The sacct fields of the log that grouped fields are parsed from."""
    return [f for fields, _, _ in _DISTINCT_GROUPS.values() for f in fields if f in m]


def _distinct_texts_sql(m: dict[str, str]) -> str:
    """The distinct texts of every group's fields in one pass over the job rows (a grouping
    set per group; `grouping_set` says whose a row is)."""
    _, raw = _packed(m)
    keys = [raw.r(f) for f in _group_keys(m)]
    sets = [
        "(" + ", ".join(raw.r(f) for f in fields if f in m) + ")"
        for fields, _, _ in _DISTINCT_GROUPS.values()
        if any(f in m for f in fields)
    ]
    return f"""SELECT {", ".join(keys)}, GROUPING({", ".join(keys)}) AS grouping_set
      FROM {_JOB_TEXT} GROUP BY GROUPING SETS ({", ".join(sets)})"""


def _grouping(m: dict[str, str], keys: list[str]) -> int:
    """The GROUPING() value of the rows of `_distinct_texts_sql` grouped by `keys`: a bit
    per key column, the first the highest, set where the column is not grouped."""
    _, raw = _packed(m)
    every = [raw.r(f) for f in _group_keys(m)]
    return sum(1 << (len(every) - 1 - i) for i, k in enumerate(every) if k not in keys)


def _distinct_sql(m: dict[str, str], tz: str, group: str) -> str:
    """Each distinct text of a group's fields (job rows) with its parsed columns and whether
    a check fails on it; one row of constants when the log has none of the fields."""
    _, raw = _packed(m)
    fields, outputs, codes = _DISTINCT_GROUPS[group]
    keys = [raw.r(f) for f in fields if f in m]
    exprs = _field_sql(m, tz, raw)
    checks = [c for c in _checks(m, raw.r, raw.jobid) if c[0] in codes]
    source = (
        f"(SELECT {', '.join(keys)} FROM {_DISTINCT} WHERE grouping_set = {_grouping(m, keys)})"
        if keys
        else "(SELECT 1)"
    )
    parts = [c for c, _ in _GPU_ORDER if c in exprs] if group == "gpus" else []
    columns = [*parts, "gpu_type"] if parts else list(outputs)
    parsed = (
        f"SELECT *, false AS is_step, {', '.join(f'{exprs[c]} AS {c}' for c in columns)} "
        f"FROM {source}"
    )
    final = ", ".join(outputs)
    if parts:
        # the count, its source and the request from the parts, as `_build_sql` has them
        parsed = f"SELECT *, {_gpu_columns(m, raw.r, parts)} FROM ({parsed})"
        final = (
            "gpu_type, try_cast(gpu_raw AS INTEGER) AS gpu_count, "
            "gpu_source_text AS gpu_source, req_gpus"
        )
    return f"SELECT {', '.join([*keys, final])}, {_any_check(checks)} AS bad FROM ({parsed})"


def _jobs_sql(m: dict[str, str], tz: str, source: str) -> str:
    """The job rows of `source` (rows of `sacct_rows`, with any more columns) in the
    columns of the precise parse, and `row_bad`: whether a check of the row fails."""
    _, raw = _packed(m)
    fields = _field_sql(m, tz, raw)
    per_row = {n: e for n, e in fields.items() if n not in _GROUP_FIELDS}
    joins, picks = [], []
    for group, (group_fields, outputs, _) in _DISTINCT_GROUPS.items():
        keys = [raw.r(f) for f in group_fields if f in m]
        on = " AND ".join(f"p.{k} IS NOT DISTINCT FROM d_{group}.{k}" for k in keys) or "true"
        joins.append(f"LEFT JOIN d_{group} ON {on}")
        picks += [f"d_{group}.{c}" for c in outputs]
    checks = [
        c for c in _checks(m, raw.r, raw.jobid) if c[0] not in _GROUP_CHECKS and c[0] != "JobID"
    ]
    return f"""
    WITH raw AS (SELECT s.* EXCLUDE (f, step_suffix, row_bad), {raw.select} FROM {source} s),
    p AS (
      SELECT *, {_utc_sql("start_local", tz)} AS start_ts,
        {", ".join(f"{expr} AS {name}" for name, expr in per_row.items())}
      FROM raw
    ),
    j AS (SELECT p.*, {", ".join(picks)} FROM p {" ".join(joins)})
    SELECT * EXCLUDE (start_local, start_ts, {", ".join(raw.cols.values())}),
      job_id AS raw_id, NULL::VARCHAR AS bad_field,
      CASE WHEN coalesce({_never_ran_sql(m, raw.r)}, false) THEN NULL ELSE start_ts END
        AS start,
      {_any_check(checks)} AS row_bad
    FROM j
    """


@dataclass
class _Fast:
    """What the fast path read: the attempts and the counts behind the notes."""

    table: pa.Table
    data_lines: int
    duplicates: int
    eligible_fallbacks: int


def _fast_read(
    con: duckdb.DuckDBPyConnection, p: Path, names: list[str], header: bool, tz: str
) -> _Fast | None:
    """The attempts of a log none of whose rows is bad, else None (see above)."""
    m = _field_map(names, p)
    _, packed = _packed(m)
    con.execute(
        f"CREATE TEMP TABLE {_ROWS} AS " + _rows_sql(m, _reader(p, len(names), header, True))
    )
    con.execute(
        f"CREATE TEMP VIEW {_JOB_TEXT} AS SELECT {packed.select} FROM {_ROWS} WHERE NOT is_step"
    )
    con.execute(f"CREATE TEMP TABLE {_DISTINCT} AS {_distinct_texts_sql(m)}")
    for group in _DISTINCT_GROUPS:
        con.execute(f"CREATE TEMP TABLE d_{group} AS {_distinct_sql(m, tz, group)}")
    bad_groups = " OR ".join(f"(SELECT bool_or(bad) FROM d_{g})" for g in _DISTINCT_GROUPS)
    lines, job_rows, bad_rows, rejected, bad_values = con.execute(
        f"""SELECT count(*), count(*) FILTER (WHERE NOT is_step), count(*) FILTER (WHERE row_bad),
          (SELECT count(*) FROM rejects), coalesce({bad_groups}, false) FROM {_ROWS}"""
    ).fetchall()[0]
    if lines == 0 or bad_rows or rejected or bad_values:
        return None
    con.execute(
        f"""CREATE TEMP TABLE sacct_counts AS SELECT job_id,
          count(*) FILTER (WHERE NOT is_step) AS n_rows,
          CAST(count(*) FILTER (WHERE is_step) AS INTEGER) AS n_steps
        FROM {_ROWS} GROUP BY job_id"""
    )
    eligible = "eligible" in {n.lower() for n in names}
    fallback = (
        "CASE WHEN n.eligible IS NULL AND n.start IS NOT NULL THEN n.submit ELSE n.eligible END"
        if eligible
        else "n.eligible"
    )
    fell_back = (
        "n.eligible IS NULL AND n.start IS NOT NULL AND n.submit IS NOT NULL"
        if eligible
        else "false"
    )
    singles = (
        f"(SELECT r.*, c.n_steps AS steps FROM {_ROWS} r JOIN sacct_counts c USING (job_id) "
        "WHERE NOT r.is_step AND c.n_rows = 1)"
    )
    single = con.sql(
        f"""WITH numbered AS (
          SELECT *, CAST(1 AS INTEGER) AS attempt FROM ({_jobs_sql(m, tz, singles)})
        )
        {_canonical_select(str(p), fallback, f", {fell_back} AS _fell_back, n.row_bad")}"""
    ).to_arrow_table()
    if pc.any(single.column("row_bad")).as_py():
        return None
    fallbacks = int(pc.sum(single.column("_fell_back")).as_py() or 0)
    tables = [single.drop_columns(["_fell_back", "row_bad"]).cast(ATTEMPTS_SCHEMA)]
    multi_ids = "SELECT job_id FROM sacct_counts WHERE n_rows > 1"
    if con.execute(f"SELECT count(*) FROM ({multi_ids})").fetchall()[0][0]:
        # Requeued jobs (and rows listed twice) take the precise fold, on their rows only.
        multi_rows = f"(SELECT * FROM {_ROWS} WHERE NOT is_step AND job_id IN ({multi_ids}))"
        con.execute(
            f"""CREATE TEMP TABLE parsed AS
            {_jobs_sql(m, tz, multi_rows)}
            UNION ALL BY NAME
            SELECT job_id || '.' || step_suffix AS raw_id, job_id, is_step,
              {_utc_sql("start_local", tz)} AS start, NULL::VARCHAR AS bad_field
            FROM {_ROWS} WHERE is_step AND job_id IN ({multi_ids})"""
        )
        if con.execute("SELECT bool_or(row_bad) FROM parsed").fetchall()[0][0]:
            return None
        con.execute("ALTER TABLE parsed DROP COLUMN row_bad")
        con.execute("CREATE TEMP VIEW parsed_rows AS SELECT * FROM parsed")
        fallbacks += _eligible_fallbacks(con, names)
        multi = con.sql(_fold_sql(str(p), eligible)).to_arrow_table()
        con.register("folded", multi)
        if con.execute(_overlaps_sql(tz)).fetchall():
            return None
        tables.append(multi.cast(ATTEMPTS_SCHEMA))
    table = pa.concat_tables(tables)
    return _Fast(table, int(lines), int(job_rows) - table.num_rows, fallbacks)


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
    attempts 1, 2, ... of one job; identical rows are kept once and counted. Bad rows raise
    :class:`InputError` unless `skip_bad_rows`, in which case they are returned in
    `bad_rows`.
    """
    p = Path(path)
    if not p.exists():
        raise InputError("no such file", path=p, hint="check the path to the sacct output")
    require_regular_file(p, "sacct output")
    names, header = _names_of(p, sacct_format)
    fast = _try_fast(p, names, header, tz)
    if fast is not None:
        return ParseResult(
            table=fast.table,
            data_lines=fast.data_lines,
            note_messages=_read_notes(p, [], fast.eligible_fallbacks, fast.duplicates),
            duplicate_rows=fast.duplicates,
        )
    con = _connect()
    try:
        parsed = _parse(con, p, names, header, tz)
        bad = parsed.bad
        bad.sort(key=lambda b: (b.line is None, b.line or 0))
        if bad and not skip_bad_rows:
            raise bad[0].as_error()
        if parsed.table.num_rows == 0 and not bad:
            raise InputError("no job rows after the header", path=p, hint=RECOMMENDED_COMMAND)
        con.register("parsed_rows", parsed.table)
        fallback = _eligible_fallbacks(con, names)
        table, duplicates, overlapping = _fold(con, p, names, parsed.table, tz)
    finally:
        con.close()
    if overlapping:
        if not skip_bad_rows:
            raise overlapping[0].as_error()
        bad = sorted(bad + overlapping, key=lambda b: (b.line is None, b.line or 0))
    return ParseResult(
        table=table.cast(ATTEMPTS_SCHEMA),
        bad_rows=bad,
        data_lines=parsed.table.num_rows,
        note_messages=_read_notes(p, parsed.notes, fallback, duplicates),
        duplicate_rows=duplicates,
    )


def _connect() -> duckdb.DuckDBPyConnection:
    con = sql.connect()
    # File order is not needed (attempts are ordered by time) and keeping it costs memory.
    con.execute("SET preserve_insertion_order = false")
    con.execute(_DURATION_MACRO)
    return con


def _try_fast(p: Path, names: list[str], header: bool, tz: str) -> _Fast | None:
    """The fast path's reading, or None where the precise path must read the file: it
    says what is wrong with it in its own words (DuckDB's faults included)."""
    con = _connect()
    try:
        return _fast_read(con, p, names, header, tz)
    except duckdb.Error:
        return None
    finally:
        con.close()


def _read_notes(p: Path, notes: list[Message], fallback: int, duplicates: int) -> list[Message]:
    """The notes of a read: the rows repaired, the waits measured from Submit, the rows
    listed more than once."""
    notes = list(notes)
    if fallback:
        # English keeps "job(s)" in both forms: the wording records have always had.
        notes.append(
            nmessage(
                "jobs",
                "{n:num} job(s) of {file} started but have Eligible Unknown: their queue wait is "
                "measured from Submit",
                "{n:num} job(s) of {file} started but have Eligible Unknown: their queue wait is "
                "measured from Submit",
                n=fallback,
                file=p.name,
            )
        )
    if duplicates:
        notes.append(
            nmessage(
                "jobs",
                "{n:num} identical job row of {file} listed more than once: kept once",
                "{n:num} identical job rows of {file} listed more than once: kept once",
                n=duplicates,
                file=p.name,
            )
        )
    return notes


@dataclass
class FieldRows:
    """Job and step rows of sacct field text after the checks and folding of read_sacct."""

    # canonical attempts (empty when a row failed a check)
    table: pa.Table
    # (raw job id, check code, raw value) of every row that failed a check, first check wins
    flagged: list[tuple[str, str, str | None]]
    # (job id, start, previous attempt's start) of attempts that overlap the one before
    overlaps: list[tuple[str, str, str]]
    # identical job rows listed more than once (kept once)
    duplicates: int
    # started job rows whose Eligible is unset (their wait is measured from Submit)
    eligible_fallbacks: int


def fold_field_rows(rows: pa.Table, names: Sequence[str], source: str) -> FieldRows:
    """Rows of sacct field text through the same parse, checks and folding as read_sacct.

    For readers of other forms of Slurm accounting (`sacct --json`): they render each job
    and step record as the text sacct prints for it (string columns c0, c1, ... in the order
    of `names`, times as `YYYY-MM-DDTHH:MM:SS` in UTC), so states, TRES, comment labels,
    attempts and steps mean exactly what they mean in `sacct --parsable2` output.
    """
    mapping = _field_map(names, Path(source))
    lowered = {n.lower() for n in names}
    con = sql.connect()
    con.execute("SET preserve_insertion_order = false")
    con.execute(_DURATION_MACRO)
    try:
        con.register("field_rows", rows)
        parsed = con.sql(_build_sql(mapping, "UTC", "field_rows")).to_arrow_table()
        if parsed.num_rows - parsed.column("bad_field").null_count:
            flagged = con.execute(
                "SELECT raw_id, bad_field, bad_value FROM ("
                + _build_sql(mapping, "UTC", "field_rows", with_values=True)
                + ")"
            ).fetchall()
            empty = pa.Table.from_pylist([], schema=ATTEMPTS_SCHEMA)
            return FieldRows(empty, [tuple(f) for f in flagged], [], 0, 0)
        con.register("parsed_rows", parsed)
        fallbacks = _eligible_fallbacks(con, list(names))
        con.register("parsed", parsed)
        folded = con.sql(_fold_sql(source, "eligible" in lowered)).to_arrow_table()
        con.register("folded", folded)
        overlaps = [(o[0], o[1], o[2]) for o in con.execute(_overlaps_sql("UTC")).fetchall()]
        ok_jobs = con.execute("SELECT count(*) FROM parsed WHERE NOT is_step").fetchall()[0][0]
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(
            "cannot read as Slurm accounting: {first}", path=source, first=first
        ) from None
    finally:
        con.close()
    return FieldRows(
        folded.cast(ATTEMPTS_SCHEMA), [], overlaps, int(ok_jobs) - folded.num_rows, fallbacks
    )


def _eligible_fallbacks(con: duckdb.DuckDBPyConnection, names: list[str]) -> int:
    """Started job rows whose Eligible is Unknown (their wait falls back to Submit)."""
    if "eligible" not in {n.lower() for n in names}:
        return 0
    return int(
        con.execute(
            "SELECT count(*) FROM parsed_rows WHERE NOT is_step AND bad_field IS NULL "
            "AND eligible IS NULL AND start IS NOT NULL AND submit IS NOT NULL"
        ).fetchall()[0][0]
    )
