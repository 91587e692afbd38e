"""The sacct reader's fast path gives what the precise path gives, and what the reader gave
before the fast path existed (issue 25).

A log without a bad row is read by the fast path (narrow passes, fields parsed once per
distinct text); any other log, and any the fast path declines, by the precise path, whose
errors name file, line and field. Both are held to the same attempts, notes and counts on the
recordings of a real Slurm (tests/fixtures/sacct/) and on variants of them: every job state,
steps (.batch, .extern, .0), array tasks and pending ranges, heterogeneous components,
requeues, rows listed twice, logs without some fields, another time zone; and malformed lines
keep the one-line errors they had, exit code 2 through the command line.

`BEFORE` holds what gpudecide at commit ab29d8a (the reader before the fast path) gave for
each case: a digest of the read (`_digest`), or the one-line error with the file as {path}.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gpudecide.errors import InputError
from gpudecide.jobs.load import load_logs
from gpudecide.jobs.profile import ProfileOptions, build_profile
from gpudecide.jobs.sacct import ParseResult, read_sacct
from gpudecide.jobs.schema import SLURM_COMPACT_STATES, SLURM_STATES

from .conftest import SACCT, examples, run_cli

SCENARIO = (SACCT / "scenario.utc.txt").read_text().splitlines()
REGRESSION = (SACCT / "regression.utc.txt").read_text().splitlines()
HEADER = SCENARIO[0].split("|")
FORMAT = SCENARIO[0].replace("|", ",")


def _set(lines: list[str], index: int, **fields: str) -> None:
    head = lines[0].split("|")
    parts = lines[index].split("|")
    for name, value in fields.items():
        parts[head.index(name)] = value
    lines[index] = "|".join(parts)


def _job_lines(lines: list[str]) -> list[int]:
    return [i for i, ln in enumerate(lines) if i and "." not in ln.split("|")[0]]


def _states(offset: int) -> list[str]:
    """The recording with every Slurm state word (and a compact code) on its job lines."""
    words = [*sorted(SLURM_STATES), *sorted(SLURM_COMPACT_STATES), "CANCELLED by 1234"]
    lines = list(SCENARIO)
    for n, i in enumerate(_job_lines(lines)):
        _set(lines, i, State=words[(offset + n) % len(words)])
    return lines


def _heterogeneous() -> list[str]:
    """Job 112 and its steps as component 0 of a heterogeneous job, a copy as component 1."""
    lines = [ln.replace("112", "112+0", 2) if ln.startswith("112") else ln for ln in SCENARIO]
    lines += [ln.replace("112+0", "112+1", 2) for ln in lines if ln.startswith("112+0")]
    return lines


def _dropped(*names: str, base: list[str] = SCENARIO) -> list[str]:
    """The recording without some fields (a shorter --format list)."""
    keep = [i for i, n in enumerate(base[0].split("|")) if n not in names]
    return ["|".join(ln.split("|")[i] for i in keep) for ln in base]


def _gres() -> list[str]:
    """Old-style GRES instead of TRES: AllocGRES `gpu:h100:2` where AllocTRES was."""
    lines = [SCENARIO[0].replace("AllocTRES", "AllocGRES").replace("ReqTRES", "ReqGRES")]
    for ln in SCENARIO[1:]:
        parts = ln.split("|")
        for col in (HEADER.index("AllocTRES"), HEADER.index("ReqTRES")):
            gpus = (
                parts[col].split("gres/gpu=")[1].split(",")[0] if "gres/gpu=" in parts[col] else ""
            )
            parts[col] = f"gpu:h100:{gpus}" if gpus else ""
        lines.append("|".join(parts))
    return lines


def _clusters() -> list[str]:
    """Two clusters' logs in one file (a Cluster field): the same ids on both."""
    lines = [SCENARIO[0] + "|Cluster"]
    lines += [ln + "|alpha" for ln in SCENARIO[1:]]
    lines += [ln + "|beta" for ln in SCENARIO[1:]]
    return lines


def _repeated() -> list[str]:
    """Every job line of the requeue recording listed twice (kept once, and counted)."""
    lines = list(REGRESSION)
    lines += [lines[i] for i in _job_lines(lines)]
    return lines


def _near_bounds() -> list[str]:
    """A step that started just after EARLIEST: valid, but the fast path leaves it to the
    precise path (a time zone could move it across)."""
    lines = list(SCENARIO)
    step = next(i for i, ln in enumerate(lines) if ln.startswith("112.batch"))
    _set(lines, step, Start="2000-01-01T06:00:00")
    return lines


# name -> (lines of the file, read_sacct keywords)
READS: dict[str, tuple[Callable[[], list[str]], dict[str, Any]]] = {
    "scenario": (lambda: SCENARIO, {}),
    "regression": (lambda: REGRESSION, {}),
    "pair": (lambda: (SACCT / "pair.utc.txt").read_text().splitlines(), {}),
    "pair-pending": (lambda: (SACCT / "pair-pending.utc.txt").read_text().splitlines(), {}),
    "regression-pending": (
        lambda: (SACCT / "regression.pending.txt").read_text().splitlines(),
        {},
    ),
    "pending-array": (
        lambda: (SACCT / "scenario.pending-array.txt").read_text().splitlines(),
        {},
    ),
    "almaty": (
        lambda: (SACCT / "scenario.almaty.txt").read_text().splitlines(),
        {"tz": "Asia/Almaty"},
    ),
    "noheader": (
        lambda: (SACCT / "scenario.noheader.txt").read_text().splitlines(),
        {"sacct_format": FORMAT},
    ),
    **{f"states-{k}": (lambda k=k: _states(k * 14), {}) for k in range(4)},
    "heterogeneous": (_heterogeneous, {}),
    "no-comment-nodelist-eligible": (lambda: _dropped("Comment", "NodeList", "Eligible"), {}),
    "no-alloctres-elapsed-timelimit": (
        lambda: _dropped("AllocTRES", "Elapsed", "Timelimit", "Priority"),
        {},
    ),
    "gres": (_gres, {}),
    "clusters": (_clusters, {}),
    "repeated": (_repeated, {}),
    "near-bounds": (_near_bounds, {}),
}


def _edit(base: list[str], line_of: Callable[[list[str]], int], **fields: str) -> list[str]:
    lines = list(base)
    _set(lines, line_of(lines), **fields)
    return lines


def _nth_job(n: int) -> Callable[[list[str]], int]:
    return lambda lines: _job_lines(lines)[n]


def _step(lines: list[str]) -> int:
    return next(i for i, ln in enumerate(lines) if ln.startswith("113.batch"))


def _short(lines: list[str]) -> list[str]:
    out = list(lines)
    i = _job_lines(out)[1]
    out[i] = out[i].rsplit("|", 1)[0]
    return out


def _pipe_in_name(lines: list[str]) -> list[str]:
    out = list(lines)
    i = _job_lines(out)[2]
    out[i] = out[i].replace("|eval-ft-llama|", "|eval|ft-llama|")
    return out


def _overlap(lines: list[str]) -> list[str]:
    """The second attempt of requeued job 9 starting before the first ended."""
    out = list(lines)
    second = [i for i, ln in enumerate(out) if ln.startswith("9|")][1]
    _set(out, second, Start="2026-12-01T00:52:35")
    return out


# name -> lines of a file with a bad row (every one: the precise path's error)
MALFORMED: dict[str, Callable[[], list[str]]] = {
    "start": lambda: _edit(SCENARIO, _nth_job(0), Start="2026-13-45T99:00:00"),
    "end": lambda: _edit(SCENARIO, _nth_job(1), End="yesterday"),
    "end-before-start": lambda: _edit(SCENARIO, _nth_job(1), End="2026-11-30T01:00:00"),
    "end-too-late": lambda: _edit(SCENARIO, _nth_job(1), End="2028-06-01T00:00:00"),
    "submit-before-2000": lambda: _edit(SCENARIO, _nth_job(2), Submit="1999-12-31T23:59:59"),
    "state": lambda: _edit(SCENARIO, _nth_job(0), State="EXPLODED"),
    "elapsed": lambda: _edit(SCENARIO, _nth_job(2), Elapsed="12 minutes"),
    "timelimit": lambda: _edit(SCENARIO, _nth_job(1), Timelimit="forever"),
    "priority": lambda: _edit(SCENARIO, _nth_job(0), Priority="high"),
    "jobid": lambda: _edit(SCENARIO, _nth_job(0), JobID="job-two"),
    "jobid-blank": lambda: _edit(SCENARIO, _nth_job(0), JobID=" "),
    "comment": lambda: _edit(SCENARIO, _nth_job(0), Comment="kind=training chain=x"),
    "alloctres": lambda: _edit(SCENARIO, _nth_job(0), AllocTRES="lots of gpus"),
    "gpus": lambda: _edit(SCENARIO, _nth_job(3), AllocTRES="gres/gpu=3000000000"),
    "step-start": lambda: _edit(SCENARIO, _step, Start="soon"),
    "step-jobid": lambda: _edit(SCENARIO, _step, JobID="113.batch.1"),
    "step-start-2100": lambda: _edit(SCENARIO, _step, Start="2100-01-01T00:00:00"),
    "fewer-fields": lambda: _short(SCENARIO),
    "pipe-in-name": lambda: _pipe_in_name(SCENARIO),
    "overlapping-attempts": lambda: _overlap(REGRESSION),
}


def _write(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / f"{name}.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def _canonical(result: ParseResult) -> dict[str, Any]:
    """A read as plain data, the same wherever the file lies (the source is its name)."""
    rows = [
        json.dumps({**r, "source": Path(r["source"]).name}, default=str, sort_keys=True)
        for r in result.table.to_pylist()
    ]
    return {
        "schema": str(result.table.schema),
        "rows": sorted(rows),
        "bad": [
            (Path(b.path).name, b.line, b.field, b.template, sorted(map(str, b.values.items())))
            for b in result.bad_rows
        ],
        "notes": result.notes,
        "data_lines": result.data_lines,
        "duplicates": result.duplicate_rows,
    }


def _digest(result: ParseResult) -> str:
    text = json.dumps(_canonical(result), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _precise(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every read from here on by the precise path."""
    monkeypatch.setattr("gpudecide.jobs.sacct._try_fast", lambda *args: None)


def _fast_taken(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each read from here on was the fast path's."""
    from gpudecide.jobs import sacct

    taken: list[bool] = []
    real = sacct._try_fast

    def spy(*args: Any) -> Any:
        result = real(*args)
        taken.append(result is not None)
        return result

    monkeypatch.setattr("gpudecide.jobs.sacct._try_fast", spy)
    return taken


@pytest.mark.parametrize("name", list(READS))
def test_both_paths_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    lines, kw = READS[name]
    path = _write(tmp_path, name, lines())
    taken = _fast_taken(monkeypatch)
    fast = read_sacct(path, **kw)
    # every case but the one made to be declined is the fast path's
    assert taken == [name != "near-bounds"]
    assert _digest(fast) == BEFORE[name]
    with monkeypatch.context() as m:
        _precise(m)
        assert _canonical(read_sacct(path, **kw)) == _canonical(fast)


@pytest.mark.parametrize(
    "name", ["scenario", "regression", "states-1", "heterogeneous", "clusters"]
)
def test_both_paths_give_the_same_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    lines, _ = READS[name]
    path = _write(tmp_path, name, lines())
    options = ProfileOptions(weeks=2, pool_gpus=4)
    fast = build_profile(load_logs([path]), options)
    _precise(monkeypatch)
    precise = build_profile(load_logs([path]), options)
    assert fast.figures == precise.figures
    assert fast.series == precise.series


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_lines_keep_their_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    path = _write(tmp_path, name, MALFORMED[name]())
    taken = _fast_taken(monkeypatch)
    with pytest.raises(InputError) as exc:
        read_sacct(path)
    assert taken == [False]
    assert exc.value.one_line().replace(str(path), "{path}") == BEFORE[name]
    skipped = read_sacct(path, skip_bad_rows=True)
    assert _digest(skipped) == BEFORE[f"{name} (skipped)"]


def test_a_malformed_line_is_exit_2_through_the_command(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad", MALFORMED["step-start"]())
    res = run_cli("profile", str(path), "--evidence-dir", str(tmp_path / "ev"))
    assert res.returncode == 2
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert lines == ["error: " + BEFORE["step-start"].replace("{path}", str(path))]
    assert not (tmp_path / "ev").exists()


# Texts a field may hold in some log: what the recordings print in that column, and the edges
# of what sacct allows (unset times, UNLIMITED limits, day-long durations, GRES forms, junk).
EDGE_TEXTS = [
    "",
    " ",
    "Unknown",
    "None",
    "None assigned",
    "UNLIMITED",
    "Partition_Limit",
    "00:00",
    "1-00:00:00",
    "59:59",
    "2026-12-01 00:00:00",
    "2000-01-01T00:00:00",
    "2099-12-31T23:59:59",
    "gres/gpu=0",
    "gres/gpu:a100=8,gres/gpu=8",
    "gpu:h100:2",
    "kind=eval",
    "chain=x",
    "|",
    "CANCELLED by 0",
    "PENDING",
    "REQUEUED",
    "0:15",
    "123_[1-3]",
    "113.0",
    "9+1",
]


def _column_texts(lines: list[str]) -> list[list[str]]:
    return [sorted({ln.split("|")[i] for ln in lines[1:]}) for i in range(len(HEADER))]


COLUMN_TEXTS = _column_texts(SCENARIO + REGRESSION[1:])


@st.composite
def _mutated(draw: st.DrawFn) -> list[str]:
    """A recording with a few fields of a few lines replaced by texts some log holds."""
    lines = list(draw(st.sampled_from([SCENARIO, REGRESSION])))
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(1, len(lines) - 1))
        parts = lines[index].split("|")
        column = draw(st.integers(0, len(HEADER) - 1))
        parts[column] = draw(st.sampled_from(COLUMN_TEXTS[column] + EDGE_TEXTS))
        lines[index] = "|".join(parts)
    if draw(st.booleans()):
        lines.append(lines[draw(st.integers(1, len(lines) - 1))])
    return lines


def _outcome(path: Path, skip: bool) -> Any:
    """A read as plain data, or its one-line error."""
    try:
        return _canonical(read_sacct(path, skip_bad_rows=skip))
    except InputError as exc:
        return exc.one_line()


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(lines=_mutated(), skip=st.booleans())
@example(lines=_edit(SCENARIO, _nth_job(0), Timelimit="UNLIMITED"), skip=False)
@example(lines=_edit(SCENARIO, _step, JobID="113.0"), skip=True)
def test_fast_and_precise_paths_agree_on_any_log(
    tmp_path: Path, lines: list[str], skip: bool
) -> None:
    """Whatever a log holds, the fast path gives the precise path's read or declines it."""
    path = tmp_path / "mutated.txt"
    path.write_text("\n".join(lines) + "\n")
    fast = _outcome(path, skip)
    with pytest.MonkeyPatch.context() as m:
        _precise(m)
        assert _outcome(path, skip) == fast


BEFORE: dict[str, str] = {
    "scenario": "ad85bd9ae9403afc",
    "regression": "84026dcfcecf20d3",
    "pair": "56359d3265e555a3",
    "pair-pending": "7c8c7312f375bdb0",
    "regression-pending": "5dd16349d144fa1f",
    "pending-array": "08f756b4b7807003",
    "almaty": "ff6ab0777cb27139",
    "noheader": "004002d76d756e8e",
    "states-0": "eb7912900e40ff4c",
    "states-1": "768f0dcac262eb94",
    "states-2": "b6d4a447252ef756",
    "states-3": "891924ad1f4fece0",
    "heterogeneous": "ee91b7387d04afc9",
    "no-comment-nodelist-eligible": "8845f321e8507032",
    "no-alloctres-elapsed-timelimit": "d892828cfe9fef56",
    "gres": "bcfc88d94cd18b59",
    "clusters": "d3f4feff40629455",
    "repeated": "f29224966c626bcf",
    "near-bounds": "7496ba1a013c7bcc",
    "start": (
        "{path}:2: field 'Start': value '2026-13-45T99:00:00' is not what sacct prints "
        "here (YYYY-MM-DDTHH:MM:SS, Unknown or None; a site's SLURM_TIME_FORMAT changes "
        "how sacct prints times: run it with SLURM_TIME_FORMAT=standard) (fix the row, or "
        "pass --skip-bad-rows to count and report such rows)"
    ),
    "start (skipped)": "6893f385da850112",
    "end": (
        "{path}:6: field 'End': value 'yesterday' is not what sacct prints here "
        "(YYYY-MM-DDTHH:MM:SS, Unknown or None; a site's SLURM_TIME_FORMAT changes how "
        "sacct prints times: run it with SLURM_TIME_FORMAT=standard) (fix the row, or "
        "pass --skip-bad-rows to count and report such rows)"
    ),
    "end (skipped)": "1d3317efe1816b7c",
    "end-before-start": (
        "{path}:6: field 'End': end '2026-11-30T01:00:00' is before start (fix the row, "
        "or pass --skip-bad-rows to count and report such rows)"
    ),
    "end-before-start (skipped)": "624cc676d726844a",
    "end-too-late": (
        "{path}:6: field 'End': end '2028-06-01T00:00:00' is more than 400 days after "
        "start (fix the row, or pass --skip-bad-rows to count and report such rows)"
    ),
    "end-too-late (skipped)": "542dc55843eb45fb",
    "submit-before-2000": (
        "{path}:9: field 'Submit': submit 1999-12-31 is outside 2000-2099, not a time a "
        "job ran (fix the row, or pass --skip-bad-rows to count and report such rows)"
    ),
    "submit-before-2000 (skipped)": "f68d22fafd22c943",
    "state": (
        "{path}:2: field 'State': state 'EXPLODED' is not a Slurm job state of "
        "22.05-26.05 (`sacct --helpstate` lists them); if a newer Slurm prints it, its "
        "rows can be counted and listed apart (fix the row, or pass --skip-bad-rows to "
        "count and report such rows)"
    ),
    "state (skipped)": "21abcc6bdc86b49e",
    "elapsed": (
        "{path}:9: field 'Elapsed': duration '12 minutes' is not [DD-[HH:]]MM:SS (fix the "
        "row, or pass --skip-bad-rows to count and report such rows)"
    ),
    "elapsed (skipped)": "e9777a5a215dc208",
    "timelimit": (
        "{path}:6: field 'Timelimit': time limit 'forever' is not a Slurm duration (fix "
        "the row, or pass --skip-bad-rows to count and report such rows)"
    ),
    "timelimit (skipped)": "a3f9201f7c2ff9e6",
    "priority": (
        "{path}:2: field 'Priority': priority 'high' is not an integer (fix the row, or "
        "pass --skip-bad-rows to count and report such rows)"
    ),
    "priority (skipped)": "efe940c66fcdad7b",
    "jobid": (
        "{path}:2: field 'JobID': job id 'job-two' is not a Slurm job id (123, 123_4, "
        "123_[5-9], 123.batch) (fix the row, or pass --skip-bad-rows to count and report "
        "such rows)"
    ),
    "jobid (skipped)": "cc3f45c488ec6c33",
    "jobid-blank": (
        "{path}:2: field 'JobID': job id ' ' is not a Slurm job id (123, 123_4, "
        "123_[5-9], 123.batch) (fix the row, or pass --skip-bad-rows to count and report "
        "such rows)"
    ),
    "jobid-blank (skipped)": "156877adf1b737d3",
    "comment": (
        "{path}:2: field 'Comment': kind label in 'kind=training chain=x' is not one of "
        "train, smoke, restart, eval, merge, quantize, export, other (fix the row, or "
        "pass --skip-bad-rows to count and report such rows)"
    ),
    "comment (skipped)": "57293adc7ee00dde",
    "alloctres": (
        "{path}:2: field 'AllocTRES': value 'lots of gpus' is not what sacct prints here "
        "(fix the row, or pass --skip-bad-rows to count and report such rows)"
    ),
    "alloctres (skipped)": "5cbd10694961be35",
    "gpus": (
        "{path}:12: field 'AllocTRES': 3000000000 GPUs is not one job's count (0-100000) "
        "(fix the row, or pass --skip-bad-rows to count and report such rows)"
    ),
    "gpus (skipped)": "70e108e4115699ca",
    "step-start": (
        "{path}:7: field 'Start': value 'soon' is not what sacct prints here "
        "(YYYY-MM-DDTHH:MM:SS, Unknown or None; a site's SLURM_TIME_FORMAT changes how "
        "sacct prints times: run it with SLURM_TIME_FORMAT=standard) (fix the row, or "
        "pass --skip-bad-rows to count and report such rows)"
    ),
    "step-start (skipped)": "70f4dde3a552a081",
    "step-jobid": (
        "{path}:7: field 'JobID': job id '113.batch.1' is not a Slurm job id (123, 123_4, "
        "123_[5-9], 123.batch) (fix the row, or pass --skip-bad-rows to count and report "
        "such rows)"
    ),
    "step-jobid (skipped)": "751a95380147d1a8",
    "step-start-2100": (
        "{path}:7: field 'Start': start 2100-01-01 is outside 2000-2099, not a time a job "
        "ran (fix the row, or pass --skip-bad-rows to count and report such rows)"
    ),
    "step-start-2100 (skipped)": "a4d27f4c59d1c55c",
    "fewer-fields": (
        "{path}:6: field 'Comment': fewer fields than the 21 in the header (fix the row, "
        "or pass --skip-bad-rows to count and report such rows)"
    ),
    "fewer-fields (skipped)": "5bc6a5000534cd21",
    "pipe-in-name": (
        "{path}:9: more fields than the 21 in the header (a '|' inside a job name or "
        "comment?) (fix the row, or pass --skip-bad-rows to count and report such rows)"
    ),
    "pipe-in-name (skipped)": "065fc2b6c1a13fc8",
    "overlapping-attempts": (
        "{path}:27: field 'Start': job 9 starts again at 2026-12-01T00:52:35 while its "
        "attempt from 2026-12-01T00:52:34 still ran: attempts of one job never overlap (a "
        "job id reused after an accounting reset, or two clusters' logs in one file? give "
        "each its own file) (fix the row, or pass --skip-bad-rows to count and report "
        "such rows)"
    ),
    "overlapping-attempts (skipped)": "d686712b24f87f64",
}
