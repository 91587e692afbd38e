"""`sacct --json` as a job log: the same attempts as `sacct --parsable2` of the same real run
(tests/fixtures/sacct/pair.*, recorded by `scripts/record-sacct-fixtures --json-pair`), the
Slurm 23.02+ shape from public real output (tests/fixtures/slurm_json/SOURCES.md), detection,
errors that name the file and the JSON path, and a fuzz of damaged documents."""

from __future__ import annotations

import copy
import json
import re
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gpudecide.errors import InputError
from gpudecide.jobs.load import detect_format, load_logs
from gpudecide.jobs.schema import ATTEMPTS_SCHEMA
from gpudecide.jobs.slurm_json import data_parser, is_slurm_json, read_slurm_json

from .conftest import FIXTURES, SACCT, examples, run_cli

PAIR_JSON = SACCT / "pair.sacct.json"
PAIR_TXT = SACCT / "pair.utc.txt"
PENDING_JSON = SACCT / "pair-pending.sacct.json"
PENDING_TXT = SACCT / "pair-pending.utc.txt"
ROLES: dict[str, dict[str, Any]] = json.loads((SACCT / "pair.meta.json").read_text())["roles"]
PUBLIC = FIXTURES / "slurm_json"


def _attempts(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    rows = load_logs([path]).attempts.to_pylist()
    return {(r["job_id"], r["attempt"]): r for r in rows}


def _differences(json_path: Path, txt_path: Path) -> dict[str, list[tuple[Any, Any]]]:
    """Per column, the (JSON, text) values that differ over attempts matched by id/attempt."""
    got, want = _attempts(json_path), _attempts(txt_path)
    assert got.keys() == want.keys()
    diffs: dict[str, list[tuple[Any, Any]]] = {}
    for key, row in got.items():
        for name in ATTEMPTS_SCHEMA.names:
            if name != "source" and row[name] != want[key][name]:
                diffs.setdefault(name, []).append((row[name], want[key][name]))
    return diffs


def test_pair_gives_the_same_attempts_as_the_text() -> None:
    """The oracle: every canonical column agrees, except three the two forms carry apart."""
    got, want = _attempts(PAIR_JSON), _attempts(PAIR_TXT)
    # 5 regression shapes + exit-3 job + held array: 13 attempts (6 array tasks, 2 requeue)
    assert len(got) == len(want) == 13
    diffs = _differences(PAIR_JSON, PAIR_TXT)
    # site: the recommended --format has no Cluster field; the JSON always names the cluster.
    assert diffs.pop("site") == [("gpudecide", None)] * 13
    # state_detail: who cancelled, as a user name in the JSON (kill_request_user), a uid in
    # the text ("CANCELLED by 0"): the pending-cancel job and the held array.
    assert sorted(diffs.pop("state_detail")) == [("CANCELLED by root", "CANCELLED by 0")] * 2
    # exit_code: Slurm 22.05's JSON writes SUCCESS and return code 0 for every exit
    # (openapi/dbv0.0.38 parse.c): it is known only for COMPLETED rows, null elsewhere. Here:
    # the cancelled, requeued, node-failed, exit-3 and held-array rows.
    assert sorted(diffs.pop("exit_code"), key=str) == sorted(
        [(None, "0:0")] * 4 + [(None, "3:0")], key=str
    )
    assert diffs == {}
    # what both forms give, by role (hand-checked against pair.utc.txt)
    requeue = ROLES["requeue"]["job_id"]
    assert [got[(requeue, n)]["state"] for n in (1, 2)] == ["requeued", "completed"]
    assert got[(requeue, 2)]["wait_reason"] == "BeginTime" and got[(requeue, 1)]["steps"] == 2
    cancelled = got[(ROLES["pending_cancel"]["job_id"], 1)]
    assert cancelled["start"] is None and cancelled["gpu_count"] is None
    assert cancelled["req_gpus"] == 1 and cancelled["state"] == "cancelled"
    array = ROLES["array_limit"]["job_id"]
    tasks = [r for r in got.values() if r["array_job_id"] == array]
    assert sorted(r["job_id"] for r in tasks) == [f"{array}_{i}" for i in range(1, 7)]
    assert {(r["gpu_count"], r["gpu_type"], r["time_limit_s"]) for r in tasks} == {(1, "h100", 300)}
    failed = got[(ROLES["exit_code"]["job_id"], 1)]
    assert (failed["state"], failed["kind_label"], failed["chain_id"]) == (
        "failed",
        "eval",
        "pair-chain",
    )
    assert got[(ROLES["blocker"]["job_id"], 1)]["gpu_count"] == 2
    assert got[(ROLES["node_fail"]["job_id"], 1)]["state"] == "node_fail"


def test_pending_array_range_is_read_from_the_hex_bitmap() -> None:
    """22.05's JSON keeps pending array tasks as the database's hex bitmap (`0x7E`)."""
    doc = json.loads(PENDING_JSON.read_text())
    assert doc["jobs"][0]["array"]["task"] == "0x7E"
    diffs = _differences(PENDING_JSON, PENDING_TXT)
    assert diffs.pop("site") == [("gpudecide", None)]
    # a pending job has not exited: 22.05's JSON says SUCCESS 0 as for any exit (see above)
    assert diffs.pop("exit_code") == [(None, "0:0")]
    assert diffs == {}
    (row,) = _attempts(PENDING_JSON).values()
    held = ROLES["held_array"]["job_id"]
    assert (row["job_id"], row["pending_tasks"], row["state"]) == (f"{held}_[1-6%2]", 6, "pending")


def test_profile_prints_the_same_figures(tmp_path: Path) -> None:
    outs = []
    for path in (PAIR_JSON, PAIR_TXT):
        res = run_cli("profile", str(path), "--json", cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        figures = json.loads(res.stdout)
        # the evidence record's id hashes its inputs, which differ by name and content
        assert figures.pop("evidence").startswith("evidence/profile-")
        outs.append(json.loads(json.dumps(figures).replace(str(path), "LOG")))
    assert outs[0] == outs[1]
    # 13 records less the 2 that never ran; 10 jobs (the requeued one twice); by hand:
    # blocker, 6 array tasks and the requeue's second attempt completed
    assert (outs[0]["attempts_total"], outs[0]["jobs_total"], outs[0]["requeue_attempts"]) == (
        11,
        10,
        1,
    )
    assert outs[0]["final_states"] == {"completed": 8, "failed": 1, "node_fail": 1}


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "version", "elapsed"),
    [
        ("sarc-slurm-23.11.5.json", "v0.0.40", 102228976.0),
        ("sarc-slurm-23.02.6.json", "v0.0.39", 83853331.0),
    ],
)
def test_public_23_x_output(name: str, version: str, elapsed: float) -> None:
    """Real sacct --json of Slurm 23.02.6 and 23.11.5 (SOURCES.md), checked by hand: job 4,
    RUNNING (time.end 0), gres/gpu 2 untyped, limit 7200 min, priority 499522."""
    path = PUBLIC / name
    doc = json.loads(path.read_text())
    assert data_parser(doc) == version and detect_format(path) == "slurm-json"
    (row,) = read_slurm_json(path).table.to_pylist()
    assert (row["job_id"], row["attempt"], row["state"], row["state_detail"]) == (
        "4",
        1,
        "running",
        "RUNNING",
    )
    assert (row["gpu_count"], row["gpu_type"], row["req_gpus"], row["gpu_source"]) == (
        2,
        None,
        2,
        "AllocTRES",
    )
    # 1613725209 = 2021-02-19T09:00:09Z for submission, eligible and start; no end yet
    for col in ("submit", "eligible", "start"):
        assert row[col] == _utc("2021-02-19T09:00:09")
    assert row["end"] is None and row["elapsed_s"] == elapsed
    assert (row["time_limit_s"], row["priority"], row["priority_class"]) == (
        432000,
        499522,
        "normal",
    )
    assert (row["user"], row["team"], row["partition"], row["site"]) == (
        "masterkohga",
        "mila",
        "main",
        "mila",
    )
    # 23.02 (v0.0.39) writes SUCCESS 0 for any exit: unknown for a running job; 23.11 exact
    assert row["exit_code"] == ("0:0" if version == "v0.0.40" else None)


def test_detection_by_content(tmp_path: Path) -> None:
    """`--format auto` knows the document by `jobs` and a Slurm `meta.plugin`, not the name."""
    plain = tmp_path / "dump.json"
    plain.write_bytes(PAIR_JSON.read_bytes())
    assert detect_format(plain) == "slurm-json"
    # saved under any name: a lone "{" opens an indented document, not a JSON Lines record
    noext = tmp_path / "accounting-2026-12"
    noext.write_bytes(PAIR_JSON.read_bytes())
    assert detect_format(noext) == "slurm-json"
    doc = json.loads(PAIR_JSON.read_text())
    assert is_slurm_json(doc) and not is_slurm_json({"jobs": doc["jobs"], "meta": {}})
    other = dict(doc, meta={"plugin": {"type": "openapi/slurmctld"}})
    assert not is_slurm_json(other)
    res = run_cli("profile", str(noext), "--format", "auto", "--json", cwd=tmp_path)
    assert res.returncode == 0 and json.loads(res.stdout)["attempts_total"] == 11


def _write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "bad.sacct.json"
    path.write_text(json.dumps(doc))
    return path


def _pair() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(PAIR_JSON.read_text())
    return doc


def _broken() -> list[tuple[str, Any, str]]:
    """(case, document, JSON path the error must name)."""
    no_jobs = _pair()
    del no_jobs["jobs"]
    no_meta = _pair()
    del no_meta["meta"]
    no_id = _pair()
    del no_id["jobs"][3]["job_id"]
    text_time = _pair()
    text_time["jobs"][3]["time"]["submission"] = "yesterday"
    far_time = _pair()
    far_time["jobs"][1]["time"]["end"] = 9_999_999_999
    bad_state = _pair()
    bad_state["jobs"][2]["state"]["current"] = "HIBERNATING"
    bad_label = _pair()
    bad_label["jobs"][0]["comment"]["job"] = "kind=training"
    step = _pair()
    step["jobs"][0]["steps"][1]["time"]["start"] = {"set": True, "number": "soon"}
    return [
        ("no jobs", no_jobs, "jobs"),
        ("no meta", no_meta, "meta"),
        ("no job id", no_id, "jobs[3].job_id"),
        ("text time", text_time, "jobs[3].time.submission"),
        ("far time", far_time, "jobs[1].time.end"),
        ("unknown state", bad_state, "jobs[2].state.current"),
        ("bad kind label", bad_label, "jobs[0].comment.job"),
        ("step time", step, "jobs[0].steps[1].time.start.number"),
    ]


@pytest.mark.parametrize(("case", "doc", "at"), _broken(), ids=[c[0] for c in _broken()])
def test_errors_name_file_and_json_path(tmp_path: Path, case: str, doc: Any, at: str) -> None:
    path = _write(tmp_path, doc)
    with pytest.raises(InputError) as exc:
        read_slurm_json(path)
    assert exc.value.path == str(path) and exc.value.field == at, exc.value.one_line()


@pytest.mark.parametrize("case", ["no jobs", "no job id", "text time"])
def test_cli_exit_2_one_line_nothing_written(tmp_path: Path, case: str) -> None:
    _, doc, at = next(c for c in _broken() if c[0] == case)
    path = _write(tmp_path, doc)
    work = tmp_path / "work"
    work.mkdir()
    res = run_cli("profile", str(path), "--format", "slurm-json", "--json", cwd=work)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    err = json.loads(res.stdout)
    assert err["path"] == str(path) and err["field"] == at
    assert list(work.iterdir()) == []


def test_requeued_attempts_and_duplicate_records(tmp_path: Path) -> None:
    """Identical records listed twice are kept once and counted, as the text reader does."""
    doc = _pair()
    doc["jobs"].append(copy.deepcopy(doc["jobs"][1]))
    result = read_slurm_json(_write(tmp_path, doc))
    assert result.duplicate_rows == 1 and result.table.num_rows == 13
    assert any("listed more than once" in n for n in result.notes)


# Fuzz: damaged documents parse or raise InputError naming the file, never anything else.
def _paths(node: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*at, k))
    elif isinstance(node, list):
        for i, v in enumerate(node[:3]):
            out += _paths(v, (*at, i))
    return out


SMALL = _pair()
# three 22.05 records and the 23.11 one: both shapes of numbers, states and exit codes
SMALL["jobs"] = [SMALL["jobs"][i] for i in (0, 2, 3)] + json.loads(
    (PUBLIC / "sarc-slurm-23.11.5.json").read_text()
)["jobs"]
# The keys the reader looks at (a damaged key it ignores tests nothing).
USED = {
    *("meta", "plugin", "type", "data_parser", "jobs", "errors", "job_id", "array", "task_id"),
    *("task", "limits", "max", "running", "tasks", "het", "job_offset", "time", "submission"),
    *("eligible", "start", "end", "elapsed", "limit", "state", "current", "reason", "id"),
    *("kill_request_user", "account", "association", "tres", "allocated", "requested", "name"),
    *("count", "priority", "user", "partition", "qos", "exit_code", "status", "return_code"),
    *("signal", "signal_id", "nodes", "comment", "job", "cluster", "steps", "step"),
}
PATHS = [p for p in _paths(SMALL) if p and all(k in USED for k in p if isinstance(k, str))]
JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.text(max_size=12),
    st.just([]),
    st.just({}),
    st.just({"set": True, "infinite": False, "number": -5}),
    st.just(["PENDING", "REQUEUED"]),
)
EDIT = st.tuples(st.sampled_from(PATHS), st.sampled_from(["drop", "replace"]), JUNK)


def _apply(doc: Any, path: tuple[Any, ...], how: str, junk: Any) -> Any:
    # `st.just` gives the same object every time: a copy, so that two edits never put one
    # dict inside itself (a document JSON cannot hold).
    junk = copy.deepcopy(junk)
    if not path:
        return junk
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if how == "drop":
        del parent[path[-1]]
    else:
        parent[path[-1]] = junk
    return doc


@settings(
    max_examples=examples(120),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(EDIT, min_size=1, max_size=4))
def test_fuzz_mutated_documents(edits: list[tuple[tuple[Any, ...], str, Any]]) -> None:
    doc = copy.deepcopy(SMALL)
    for at, how, junk in edits:
        try:
            doc = _apply(doc, at, how, junk)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed or replaced this path's parent
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.json"
        path.write_text(json.dumps(doc))
        try:
            result = read_slurm_json(path)
        except InputError as exc:
            one = exc.one_line()
            assert exc.path == str(path) and one.startswith(str(path)) and "\n" not in one
            where = re.sub(r"\[\d+\]", "[]", exc.field or "the file")
            event(f"InputError at {where}")
            return
    assert result.table.schema == ATTEMPTS_SCHEMA
    event(f"read, {result.table.num_rows} attempts")
    assert result.table.num_rows <= len(doc["jobs"])


def _index_of(doc: dict[str, Any], job_id: str, nth: int = 0) -> int:
    return [i for i, j in enumerate(doc["jobs"]) if str(j["job_id"]) == job_id][nth]


def test_overlapping_attempts_name_the_later_record(tmp_path: Path) -> None:
    """Attempts of one job never overlap: a second record starting inside the first is an
    error at that record's start, as the text reader says it at that line."""
    doc = _pair()
    requeue = ROLES["requeue"]["job_id"]
    first, second = _index_of(doc, requeue), _index_of(doc, requeue, 1)
    doc["jobs"][second]["time"]["start"] = doc["jobs"][first]["time"]["start"] + 1
    with pytest.raises(InputError, match="never overlap") as exc:
        read_slurm_json(_write(tmp_path, doc))
    assert exc.value.field == f"jobs[{second}].time.start"


def test_gpu_count_out_of_range_names_the_tres_list(tmp_path: Path) -> None:
    doc = _pair()
    i = _index_of(doc, ROLES["node_fail"]["job_id"])
    gpus = [t for t in doc["jobs"][i]["tres"]["allocated"] if t["name"] == "gpu"]
    gpus[0]["count"] = 200_000
    with pytest.raises(InputError, match="200000 GPUs") as exc:
        read_slurm_json(_write(tmp_path, doc))
    assert exc.value.field == f"jobs[{i}].tres.allocated"
    # the boundary: the largest count one job can hold is read
    gpus[0]["count"] = 100_000
    rows = read_slurm_json(_write(tmp_path, doc)).table.to_pylist()
    assert [r["gpu_count"] for r in rows if r["job_id"] == ROLES["node_fail"]["job_id"]] == [
        100_000
    ]


def test_bad_step_id_names_the_step(tmp_path: Path) -> None:
    doc = _pair()
    i = _index_of(doc, ROLES["blocker"]["job_id"])
    doc["jobs"][i]["steps"][1]["step"]["id"] = "bat ch"
    with pytest.raises(InputError, match="not a Slurm job id") as exc:
        read_slurm_json(_write(tmp_path, doc))
    assert exc.value.field == f"jobs[{i}].steps[1].step.id"


def _sarc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((PUBLIC / "sarc-slurm-23.11.5.json").read_text())
    return doc


def _one(tmp_path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = read_slurm_json(_write(tmp_path, doc)).table.to_pylist()
    assert len(rows) == 1
    return rows[0]


def test_state_list_flag_wins_over_base(tmp_path: Path) -> None:
    """v0.0.40+ lists the base state then flags; sacct prints the flag (job_state_string)."""
    doc = _sarc()
    job = doc["jobs"][0]
    job["time"]["end"] = job["time"]["start"] + 60
    job["state"]["current"] = ["PENDING", "REQUEUED"]
    row = _one(tmp_path, doc)
    assert (row["state"], row["state_detail"]) == ("requeued", "REQUEUED")
    # a flag job_state_string does not print leaves the base state
    job["state"]["current"] = ["COMPLETED", "LAUNCH_FAILED"]
    assert _one(tmp_path, doc)["state"] == "completed"
    job["state"]["current"] = ["CANCELLED"]
    job["kill_request_user"] = "alice"
    assert _one(tmp_path, doc)["state_detail"] == "CANCELLED by alice"


def test_exit_codes_of_v0040_are_exact(tmp_path: Path) -> None:
    doc = _sarc()
    job = doc["jobs"][0]
    job["exit_code"] = {
        "status": ["ERROR"],
        "return_code": {"set": True, "infinite": False, "number": 3},
        "signal": {"id": {"set": False, "infinite": False, "number": 0}, "name": ""},
    }
    assert _one(tmp_path, doc)["exit_code"] == "3:0"
    job["exit_code"] = {
        "status": ["SIGNALED"],
        "return_code": {"set": False, "infinite": False, "number": 0},
        "signal": {"id": {"set": True, "infinite": False, "number": 9}, "name": "KILL"},
    }
    assert _one(tmp_path, doc)["exit_code"] == "0:9"
    job["exit_code"]["status"] = ["PENDING"]
    job["exit_code"]["signal"]["id"]["set"] = False
    assert _one(tmp_path, doc)["exit_code"] is None


def test_ids_of_array_tasks_ranges_and_het_components(tmp_path: Path) -> None:
    doc = _sarc()
    job = doc["jobs"][0]
    job["array"]["job_id"] = 4
    job["array"]["task_id"] = {"set": True, "infinite": False, "number": 7}
    row = _one(tmp_path, doc)
    assert (row["job_id"], row["array_job_id"]) == ("4_7", "4")
    # still-pending tasks 0, 2, 4 and 5 as the database's hex bitmap, no limit
    job["array"]["task_id"] = {"set": False, "infinite": False, "number": 0}
    job["array"]["task"] = "0x35"
    job["state"]["current"] = ["PENDING"]
    job["time"]["start"] = 0
    row = _one(tmp_path, doc)
    assert (row["job_id"], row["pending_tasks"], row["start"]) == ("4_[0,2,4-5]", 4, None)
    for bad in ("0xZZ", "0x" + "F" * 1_000_001):  # not hex; more tasks than MaxArraySize
        job["array"]["task"] = bad
        with pytest.raises(InputError, match="array tasks") as exc:
            _one(tmp_path, doc)
        assert exc.value.field == "jobs[0].array.task"
    # the boundary: task ids 0 to 4000000, the most MaxArraySize allows, are read
    job["array"]["task"] = "0x1" + "0" * 1_000_000
    assert _one(tmp_path, doc)["job_id"] == "4_[4000000]"
    job["array"] = {"job_id": 0, "task_id": {"set": False}, "task": ""}
    job["het"] = {"job_id": 4, "job_offset": {"set": True, "infinite": False, "number": 1}}
    assert _one(tmp_path, doc)["job_id"] == "4+1"


def test_unlimited_and_unset_values_are_null(tmp_path: Path) -> None:
    doc = _sarc()
    job = doc["jobs"][0]
    job["time"]["limit"] = {"set": False, "infinite": True, "number": 0}
    job["priority"] = {"set": False, "infinite": False, "number": 0}
    job["time"]["eligible"] = 0
    row = _one(tmp_path, doc)
    assert (row["time_limit_s"], row["priority"]) == (None, None)
    # a started job without an eligible time waits from its submission (as the text reader)
    assert row["eligible"] == row["submit"]


def test_both_forms_together_are_one_log() -> None:
    """The JSON and the text of one run given together: each attempt is kept once (the
    loader drops attempts listed in overlapping dumps), none is counted twice."""
    log = load_logs([PAIR_JSON, PAIR_TXT])
    assert log.attempts.num_rows == 13 and log.duplicate_rows == 13
    alone = load_logs([PAIR_JSON], fmt="slurm-json")
    assert alone.attempts.num_rows == 13 and alone.duplicate_rows == 0


def test_errors_slurm_reported_are_noted(tmp_path: Path) -> None:
    doc = _pair()
    doc["errors"] = [{"error": "Unable to query the database", "error_number": 1}]
    result = read_slurm_json(_write(tmp_path, doc))
    assert result.table.num_rows == 13
    assert result.notes == [
        "bad.sacct.json: Slurm reported 1 error(s) with this output; jobs may be missing from it"
    ]


def test_the_nodes_of_each_attempt_are_kept() -> None:
    """`nodes` of `sacct --json` is the attempt's {"node": ...} in `extras`, as NodeList is
    in the text (the pair agrees column for column above); a job that never got a node has
    none."""
    got = _attempts(PAIR_JSON)
    started = [r for r in got.values() if r["start"] is not None]
    assert started and all(json.loads(r["extras"]) == {"node": "localhost"} for r in started)
    assert got[(ROLES["pending_cancel"]["job_id"], 1)]["extras"] is None
    (public,) = _attempts(PUBLIC / "sarc-slurm-23.11.5.json").values()
    assert json.loads(public["extras"]) == {"node": "mila02"}
