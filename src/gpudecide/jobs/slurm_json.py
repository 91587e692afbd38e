"""Slurm `sacct --json` output (and slurmrestd's /slurmdb/.../jobs) into canonical attempts.

Each job record is rendered as the text `sacct --parsable2` prints for it and goes through the
sacct reader's own parse, checks and folding (`sacct.fold_field_rows`): states, "CANCELLED by",
TRES GPU counts and types, comment labels (kind=..., chain=...), never-ran jobs, requeued
attempts and steps mean exactly what they mean in the text form. tests/test_slurm_json.py
holds the two forms of one real run side by side (tests/fixtures/sacct/pair.*).

Two families of JSON, told apart by `meta.plugin`:
- Slurm 22.05 (`"type": "openapi/dbv0.0.38"`, recorded here from 22.05.8): numbers are
  plain or null (null for Slurm's NO_VAL/INFINITE), `state.current` is one word,
  `array.task` the hex bitmap of still-pending array tasks (`0x7E`, as the accounting
  database keeps it);
- Slurm 23.02 and later (`"data_parser": "data_parser/v0.0.39"` ... v0.0.42 and on): many
  numbers are `{"set": true, "infinite": false, "number": N}` objects; from v0.0.40 (Slurm
  23.11) `state.current` is a list (the base state, then flags such as REQUEUED) and exit
  codes carry their real return code (before, every exit reads SUCCESS 0: see _exit_code).
A time 0 or unset is null; a value the JSON lacks is null, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from gpudecide.errors import InputError, excerpt
from gpudecide.fsutil import require_regular_file
from gpudecide.jobs import bounds
from gpudecide.jobs.sacct import (
    RECOMMENDED_FIELDS,
    FieldRows,
    ParseResult,
    describe_bad,
    fold_field_rows,
)
from gpudecide.jobs.schema import SLURM_STATES
from gpudecide.jsonio import read_json
from gpudecide.message import Message, nmessage

__all__ = [
    "NAMES",
    "data_parser",
    "is_slurm_json",
    "read_slurm_json",
]

# The sacct fields each record is rendered into (the README's list, plus the cluster).
NAMES = [*RECOMMENDED_FIELDS.split(","), "Cluster"]
_INDEX = {n: i for i, n in enumerate(NAMES)}
_HINT = "expected the output of `sacct --json` (or slurmrestd's /slurmdb/v0.0.NN/jobs)"
_DATA_PARSER = re.compile(r"(?:data_parser/)?(v0\.0\.\d+)")
_DB_PLUGIN = re.compile(r"openapi/db(v0\.0\.\d+)")
# Flag states win over the base state, in this order, in the word sacct prints
# (job_state_string() in src/common/slurm_protocol_defs.c, Slurm 22.05-25.11).
_FLAG_ORDER = (
    "COMPLETING",
    "STAGE_OUT",
    "CONFIGURING",
    "RESIZING",
    "REQUEUED",
    "REQUEUE_FED",
    "REQUEUE_HOLD",
    "SPECIAL_EXIT",
    "STOPPED",
    "REVOKED",
    "RESV_DEL_HOLD",
    "SIGNALING",
    "EXPEDITING",
)
# MaxArraySize's largest value (slurm.conf(5)): array task ids are below it.
_MAX_ARRAY_SIZE = 4_000_001
# The field a failed row check names, as a path inside one job record.
_CHECK_PATHS = {
    "JobID": "job_id",
    "State": "state.current",
    "Submit": "time.submission",
    "Eligible": "time.eligible",
    "Start": "time.start",
    "End": "time.end",
    "End:before": "time.end",
    "End:long": "time.end",
    "Elapsed": "time.elapsed",
    "Timelimit": "time.limit",
    "AllocTRES": "tres.allocated",
    "ReqTRES": "tres.requested",
    "Priority": "priority",
    "Comment": "comment.job",
}


def data_parser(doc: Any) -> str | None:
    """The Slurm JSON version (`v0.0.38`, `v0.0.40`, ...) a document's `meta.plugin` names.

    None when `meta` names neither a data parser (Slurm 23.02+) nor a slurmdbd OpenAPI plugin
    (Slurm 20.11-22.05): the document is then not Slurm's.
    """
    meta = doc.get("meta") if isinstance(doc, dict) else None
    if not isinstance(meta, dict):
        return None
    # squeue of 23.02 writes "plugins"; every other version "plugin"
    plugin = meta.get("plugin", meta.get("plugins"))
    if not isinstance(plugin, dict):
        return None
    parser, kind = plugin.get("data_parser"), plugin.get("type")
    if isinstance(parser, str) and (m := _DATA_PARSER.fullmatch(parser)):
        return m.group(1)
    if isinstance(kind, str) and (m := _DB_PLUGIN.fullmatch(kind)):
        return m.group(1)
    return None


def is_slurm_json(doc: Any) -> bool:
    """A JSON object with a `jobs` list whose `meta` names a Slurm data parser."""
    return isinstance(doc, dict) and isinstance(doc.get("jobs"), list) and bool(data_parser(doc))


@dataclass
class _Source:
    """One document being read: where errors point, and which JSON family it is."""

    path: Path
    # the data parser's minor version: 38 for Slurm 22.05, 40 for 23.11, ...
    version: int
    rows: list[list[str]] = field(default_factory=list)
    # (job index, step index or None) of each row
    where: list[tuple[int, int | None]] = field(default_factory=list)

    def number(self, value: Any, at: str) -> int | None:
        """A whole number, plain or as {"set", "infinite", "number"}; unset/infinite -> None."""
        if value is None:
            return None
        if isinstance(value, dict):
            if value.get("infinite") is True or value.get("set") is False:
                return None
            if "number" not in value:
                raise InputError(
                    "is neither a number nor a set/infinite/number object", path=self.path, field=at
                )
            return self.number(value["number"], f"{at}.number")
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(
                "{excerpt} is not a whole number", path=self.path, field=at, excerpt=excerpt(value)
            )
        return value

    def text(self, value: Any, at: str) -> str:
        """A string field; null is empty, as sacct prints it."""
        if value is None:
            return ""
        if not isinstance(value, str):
            raise InputError(
                "{excerpt} is not text", path=self.path, field=at, excerpt=excerpt(value)
            )
        return value

    def obj(self, parent: dict[str, Any], key: str, at: str) -> dict[str, Any]:
        """A nested object; missing or null is empty."""
        value = parent.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise InputError(
                "{excerpt} is not an object",
                path=self.path,
                field=f"{at}.{key}",
                excerpt=excerpt(value),
            )
        return value

    def time(self, value: Any, at: str) -> str:
        """Unix seconds as sacct prints them in UTC; 0 and unset are empty (sacct: Unknown)."""
        n = self.number(value, at)
        if not n:
            return ""
        try:
            stamp = datetime.fromtimestamp(n, UTC)
        except (OverflowError, OSError, ValueError):
            raise InputError("is not a time a job ran", path=self.path, field=at) from None
        problem = bounds.stamp_problem(stamp)
        if problem:
            raise InputError(problem[0], path=self.path, field=at, **problem[1])
        return stamp.strftime("%Y-%m-%dT%H:%M:%S")

    def duration(self, value: Any, at: str, unit: int = 1) -> str:
        """Seconds (or minutes, unit 60) as a Slurm duration; unset is empty (unlimited)."""
        n = self.number(value, at)
        # a time limit of 0 is none set (sacct prints nothing; --time=0 is stored as INFINITE)
        if n is None or (unit == 60 and n == 0):
            return ""
        if not 0 <= n < 2**32:
            raise InputError(
                "{n} is not a duration Slurm keeps (0 to 2^32-1)", path=self.path, field=at, n=n
            )
        days, rest = divmod(n * unit, 86_400)
        hours, rest = divmod(rest, 3600)
        clock = f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
        return f"{days}-{clock}" if days else clock

    def tres(self, value: Any, at: str) -> str:
        """A TRES list as sacct prints it: `type/name=count`, sorted (`gres/gpu:h100=2,...`)."""
        if value is None:
            return ""
        if not isinstance(value, list):
            raise InputError(
                "{excerpt} is not a list of TRES", path=self.path, field=at, excerpt=excerpt(value)
            )
        parts = []
        for k, entry in enumerate(value):
            if not isinstance(entry, dict):
                raise InputError(
                    "{excerpt} is not a TRES object",
                    path=self.path,
                    field=f"{at}[{k}]",
                    excerpt=excerpt(entry),
                )
            kind = self.text(entry.get("type"), f"{at}[{k}].type")
            name = self.text(entry.get("name"), f"{at}[{k}].name")
            count = self.number(entry.get("count"), f"{at}[{k}].count")
            # energy and other TRES Slurm did not count come as null
            if kind and count is not None:
                parts.append(f"{kind}/{name}={count}" if name else f"{kind}={count}")
        return ",".join(sorted(parts))


def _state_word(src: _Source, value: Any, at: str) -> str:
    """The one state word sacct prints: a flag state (REQUEUED ...) over the base state."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not value or not all(isinstance(w, str) for w in value):
        raise InputError(
            "{excerpt} is not a Slurm job state", path=src.path, field=at, excerpt=excerpt(value)
        )
    for flag in _FLAG_ORDER:
        if flag in value:
            return flag
    base = [w for w in value if w in SLURM_STATES]
    return str(base[0] if base else value[0])


def _exit_code(src: _Source, value: Any, state: str, at: str) -> str:
    """`return code:signal` as sacct prints it; empty where the JSON does not know it."""
    if value is None:
        return ""
    if not isinstance(value, dict):
        raise InputError(
            "{excerpt} is not an exit code object", path=src.path, field=at, excerpt=excerpt(value)
        )
    status = value.get("status")
    status = status[0] if isinstance(status, list) and status else status
    if status is not None and not isinstance(status, str):
        raise InputError(
            "{excerpt} is not an exit status",
            path=src.path,
            field=f"{at}.status",
            excerpt=excerpt(status),
        )
    rc = src.number(value.get("return_code"), f"{at}.return_code")
    signal = src.obj(value, "signal", at)
    sig_key = "signal_id" if "signal_id" in signal else "id"
    sig = src.number(signal.get(sig_key), f"{at}.signal.{sig_key}")
    if status == "PENDING" or (status == "INVALID" and rc is None):
        return ""
    if src.version < 40:
        # Before data_parser v0.0.40 (Slurm 23.11) Slurm writes SUCCESS and return code 0 for
        # every process that exited, whatever its code, and -127 beside a signal (openapi
        # dbv0.0.38 parse.c and data_parser v0.0.39 parsers.c, JOB_EXIT_CODE): the code is
        # known only where the state says it, COMPLETED (exit 0), or from the signal.
        if status == "SUCCESS":
            return "0:0" if state == "COMPLETED" else ""
        if status == "SIGNALED" and sig is not None:
            return f"0:{sig}"
        if status != "ERROR":
            return ""
    return f"{rc or 0}:{sig or 0}"


def _task_ranges(src: _Source, task: str, limit: int | None, at: str) -> str:
    """Pending array tasks as sacct prints them (`1-6%2`) from the database's hex bitmap."""
    if re.fullmatch(r"0[xX][0-9A-Fa-f]+", task):
        # Slurm's MaxArraySize is at most 4000001: task ids beyond are not an array's
        size = (len(task) - 2) * 4
        if size > _MAX_ARRAY_SIZE + 3 or int(task, 16).bit_length() > _MAX_ARRAY_SIZE:
            raise InputError(
                "bitmap of {size} array tasks is longer than Slurm allows",
                path=src.path,
                field=at,
                size=size,
            )
        bits = bin(int(task, 16))[:1:-1]
        ids = [i for i, bit in enumerate(bits) if bit == "1"]
        ranges: list[str] = []
        for i in ids:
            if ranges and ranges[-1].rsplit("-", 1)[-1] == str(i - 1):
                ranges[-1] = f"{ranges[-1].split('-')[0]}-{i}"
            else:
                ranges.append(str(i))
        text = ",".join(ranges)
    elif re.fullmatch(r"[0-9][0-9,\-]*(%[0-9]+)?", task):
        text = task
    else:
        raise InputError(
            "{excerpt} is not a list of array tasks", path=src.path, field=at, excerpt=excerpt(task)
        )
    if limit and "%" not in text:
        text += f"%{limit}"
    return text


def _job_id(src: _Source, job: dict[str, Any], at: str) -> tuple[int, str]:
    """The raw job id and the JobID sacct prints (123, 123_4, 123_[5-9%2], 123+0)."""
    raw = src.number(job.get("job_id"), f"{at}.job_id")
    if raw is None:
        raise InputError(
            "job record without a job_id", path=src.path, field=f"{at}.job_id", hint=_HINT
        )
    array = src.obj(job, "array", at)
    array_id = src.number(array.get("job_id"), f"{at}.array.job_id")
    task_id = src.number(array.get("task_id"), f"{at}.array.task_id")
    task = src.text(array.get("task"), f"{at}.array.task")
    limits = src.obj(src.obj(src.obj(array, "limits", at), "max", at), "running", at)
    limit = src.number(limits.get("tasks"), f"{at}.array.limits.max.running.tasks")
    het = src.obj(job, "het", at)
    het_id = src.number(het.get("job_id"), f"{at}.het.job_id")
    offset = src.number(het.get("job_offset"), f"{at}.het.job_offset")
    # slurmdb_get_job_id_str() in src/common/slurmdb_defs.c, in this order
    if task:
        return raw, f"{array_id or raw}_[{_task_ranges(src, task, limit, f'{at}.array.task')}]"
    if task_id is not None:
        return raw, f"{array_id or raw}_{task_id}"
    if het_id and offset is not None:
        return raw, f"{het_id}+{offset}"
    return raw, str(raw)


def _job_row(src: _Source, job: dict[str, Any], at: str) -> tuple[int, str, list[str]]:
    """One job record as the sacct fields of NAMES."""
    raw, job_id = _job_id(src, job, at)
    times = src.obj(job, "time", at)
    state = src.obj(job, "state", at)
    word = _state_word(src, state.get("current"), f"{at}.state.current")
    killer = src.text(job.get("kill_request_user"), f"{at}.kill_request_user")
    # sacct prints who cancelled a job; the JSON names the user, the text the uid
    state_text = f"{word} by {killer}" if word == "CANCELLED" and killer else word
    account = job.get("account", src.obj(job, "association", at).get("account"))
    tres = src.obj(job, "tres", at)
    priority = src.number(job.get("priority"), f"{at}.priority")
    values = {
        "JobID": job_id,
        "JobIDRaw": str(raw),
        "JobName": src.text(job.get("name"), f"{at}.name"),
        "User": src.text(job.get("user"), f"{at}.user"),
        "Account": src.text(account, f"{at}.account"),
        "Partition": src.text(job.get("partition"), f"{at}.partition"),
        "QOS": src.text(job.get("qos"), f"{at}.qos"),
        "Priority": "" if priority is None else str(priority),
        "State": state_text,
        "ExitCode": _exit_code(src, job.get("exit_code"), word, f"{at}.exit_code"),
        "Reason": src.text(state.get("reason"), f"{at}.state.reason"),
        "Submit": src.time(times.get("submission"), f"{at}.time.submission"),
        "Eligible": src.time(times.get("eligible"), f"{at}.time.eligible"),
        "Start": src.time(times.get("start"), f"{at}.time.start"),
        "End": src.time(times.get("end"), f"{at}.time.end"),
        "Elapsed": src.duration(times.get("elapsed"), f"{at}.time.elapsed"),
        "Timelimit": src.duration(times.get("limit"), f"{at}.time.limit", unit=60),
        "AllocTRES": src.tres(tres.get("allocated"), f"{at}.tres.allocated"),
        "ReqTRES": src.tres(tres.get("requested"), f"{at}.tres.requested"),
        "NodeList": src.text(job.get("nodes"), f"{at}.nodes"),
        "Comment": src.text(src.obj(job, "comment", at).get("job"), f"{at}.comment.job"),
        "Cluster": src.text(job.get("cluster"), f"{at}.cluster"),
    }
    return raw, job_id, [values[n] for n in NAMES]


def _step_rows(src: _Source, job: dict[str, Any], i: int, ids: tuple[int, str]) -> None:
    """The job's steps as `123.batch` rows (the sacct reader counts them per attempt)."""
    raw, job_id = ids
    at = f"jobs[{i}]"
    steps = job.get("steps")
    if steps is None:
        return
    if not isinstance(steps, list):
        raise InputError(
            "{excerpt} is not a list of steps",
            path=src.path,
            field=f"{at}.steps",
            excerpt=excerpt(steps),
        )
    for k, step in enumerate(steps):
        where = f"{at}.steps[{k}]"
        if not isinstance(step, dict):
            raise InputError(
                "{excerpt} is not a step object", path=src.path, field=where, excerpt=excerpt(step)
            )
        sid = src.obj(step, "step", where).get("id")
        if isinstance(sid, int) and not isinstance(sid, bool):
            name = str(sid)
        else:
            # "batch" (22.05), "26.batch" (23.02 and later)
            name = src.text(sid, f"{where}.step.id").split(".", 1)[-1]
        row = [""] * len(NAMES)
        row[_INDEX["JobID"]] = f"{job_id}.{name}"
        row[_INDEX["JobIDRaw"]] = f"{raw}.{name}"
        times = src.obj(step, "time", where)
        row[_INDEX["Start"]] = src.time(times.get("start"), f"{where}.time.start")
        row[_INDEX["End"]] = src.time(times.get("end"), f"{where}.time.end")
        src.rows.append(row)
        src.where.append((i, k))


def _jobs_of(doc: Any, path: Path) -> tuple[list[Any], int, list[Message]]:
    """The jobs list, the data parser's minor version, and notes on sacct's own errors."""
    if not isinstance(doc, dict):
        raise InputError("not a sacct --json document (a JSON object)", path=path, hint=_HINT)
    if not isinstance(doc.get("meta"), dict):
        raise InputError("no `meta` object", path=path, field="meta", hint=_HINT)
    version = data_parser(doc)
    if version is None:
        raise InputError(
            "`meta.plugin` names no Slurm data parser", path=path, field="meta.plugin", hint=_HINT
        )
    jobs = doc.get("jobs")
    if not isinstance(jobs, list):
        if jobs is None:
            raise InputError("no `jobs` list", path=path, field="jobs", hint=_HINT)
        raise InputError(
            "{excerpt} is not a list", path=path, field="jobs", hint=_HINT, excerpt=excerpt(jobs)
        )
    if not jobs:
        raise InputError("the jobs list is empty", path=path, field="jobs", hint=_HINT)
    notes = []
    errors = doc.get("errors")
    if isinstance(errors, list) and errors:
        # English keeps "error(s)" in both forms: the wording records have always had.
        notes.append(
            nmessage(
                "jobs",
                "{file}: Slurm reported {n:num} error(s) with this output; jobs may be missing "
                "from it",
                "{file}: Slurm reported {n:num} error(s) with this output; jobs may be missing "
                "from it",
                n=len(errors),
                file=path.name,
            )
        )
    return jobs, int(version.rsplit(".", 1)[1]), notes


def _render(src: _Source, jobs: list[Any]) -> None:
    """Every job record and its steps as rows of sacct field text, in src.rows."""
    for i, job in enumerate(jobs):
        at = f"jobs[{i}]"
        if not isinstance(job, dict):
            raise InputError(
                "{excerpt} is not a job object",
                path=src.path,
                field=at,
                hint=_HINT,
                excerpt=excerpt(job),
            )
        if not isinstance(job.get("time"), dict):
            raise InputError(
                "job record without a `time` object",
                path=src.path,
                field=f"{at}.time",
                hint="squeue/scontrol --json list live jobs in another shape: use sacct --json",
            )
        raw, job_id, row = _job_row(src, job, at)
        src.rows.append(row)
        src.where.append((i, None))
        _step_rows(src, job, i, (raw, job_id))


def _locate(src: _Source, raw_id: str, code: str, value: str | None) -> str:
    """JSON path of the record a failed check names (its rendered id and value match)."""
    col = _INDEX.get(code.split(":")[0])
    sub = _CHECK_PATHS.get(code, "")
    needle = value
    if code == "GPUs" and value:
        # "AllocTRES 200000": the TRES field and the count that is out of range
        name, _, count = value.partition(" ")
        col, needle = _INDEX[name], f"={count}"
        sub = "tres.allocated" if name == "AllocTRES" else "tres.requested"
    for row, (i, k) in zip(src.rows, src.where, strict=True):
        if row[_INDEX["JobID"]] != raw_id:
            continue
        if col is not None and needle is not None:
            text = row[col]
            if code == "GPUs":
                if not any(part.endswith(needle) for part in text.split(",")):
                    continue
            elif text != needle:
                continue
        if k is not None:
            return f"jobs[{i}].steps[{k}]." + ("step.id" if code == "JobID" else "time.start")
        return f"jobs[{i}].{sub}" if sub else f"jobs[{i}]"
    return "jobs"


def _raise_first(src: _Source, folded: FieldRows) -> None:
    """A failed row check or overlapping attempts as the error naming the JSON path."""
    if folded.flagged:
        raw_id, code, value = folded.flagged[0]
        at = _locate(src, raw_id, code, value)
        if code == "GPUs" and value:
            raise InputError(
                "{value} GPUs is not one job's count (0-{most})",
                path=src.path,
                field=at,
                value=value.partition(" ")[2],
                most=bounds.MAX_GPU_COUNT,
            )
        template, values = describe_bad(code, value)
        raise InputError(template, path=src.path, field=at, **values)
    if folded.overlaps:
        job_id, text, prev = folded.overlaps[0]
        at = _locate(src, job_id, "Start", text)
        raise InputError(
            "job {job_id} starts again at {text} while its attempt from {prev} still ran: "
            "attempts of one job never overlap (a job id reused after an accounting reset, "
            "or two clusters' logs in one file? give each its own file)",
            path=src.path,
            field=at,
            job_id=job_id,
            text=text,
            prev=prev,
        )


def read_slurm_json(path: str | Path, doc: Any = None) -> ParseResult:
    """Read `sacct --json` output (Slurm 22.05 and later) into canonical attempts.

    With `sacct --duplicates` each requeued attempt is its own record: attempts 1, 2, ... of
    one job, numbered as the sacct reader numbers them; steps count per attempt; identical
    records are kept once and counted. Bad input raises :class:`InputError` naming the file
    and the JSON path of the field (`jobs[3].time.submission`). `doc`: the file already
    parsed, if it was.
    """
    p = Path(path)
    require_regular_file(p, "sacct --json output")
    jobs, version, notes = _jobs_of(read_json(p) if doc is None else doc, p)
    src = _Source(p, version)
    _render(src, jobs)
    columns = list(zip(*src.rows, strict=True))
    table = pa.table({f"c{i}": pa.array(col, pa.string()) for i, col in enumerate(columns)})
    folded = fold_field_rows(table, NAMES, str(p))
    _raise_first(src, folded)
    if folded.eligible_fallbacks:
        notes.append(
            nmessage(
                "jobs",
                "{n:num} job of {file} started but has no eligible time: its queue wait is "
                "measured from submission",
                "{n:num} jobs of {file} started but have no eligible time: their queue wait is "
                "measured from submission",
                n=folded.eligible_fallbacks,
                file=p.name,
            )
        )
    if folded.duplicates:
        notes.append(
            nmessage(
                "jobs",
                "{n:num} identical job record of {file} listed more than once: kept once",
                "{n:num} identical job records of {file} listed more than once: kept once",
                n=folded.duplicates,
                file=p.name,
            )
        )
    return ParseResult(
        table=folded.table,
        data_lines=len(src.rows),
        note_messages=notes,
        duplicate_rows=folded.duplicates,
    )
