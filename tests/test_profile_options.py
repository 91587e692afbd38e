"""`gpudecide profile` on the logs of several options (issues 21, 24, 27): one record per
option the logs come from and one for the team's workload, the lifecycle marks joined to
the jobs, and a workspace log that is not there named by its setting."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from gpudecide import evidence as ev
from gpudecide.jobs.demo import LOG_DATA
from gpudecide.jobs.load import load_logs
from gpudecide.jobs.profile_figures import figures_of

from .conftest import FIXTURES, SACCT, run_cli

SAGEMAKER = FIXTURES / "managed" / "sagemaker" / "ft-llama-r1-p5-20260728-0140.api.json"


def _workspace(tmp_path: Path, entries: str) -> Path:
    """A workspace from `gpudecide init` (options owned-pool on Slurm, managed-endpoint a
    vendor, ...) with the demo's sacct log and a SageMaker job, and these `logs:` entries."""
    root = tmp_path / "ws"
    assert run_cli("init", str(root)).returncode == 0
    shutil.copy(LOG_DATA, root / "logs" / "sacct.txt")
    shutil.copy(SAGEMAKER, root / "logs" / "sm.json")
    config = root / "gpudecide.yaml"
    text = config.read_text()
    start = text.index("logs:\n")
    end = text.index("\n# Defaults of `gpudecide profile`.")
    config.write_text(text[:start] + "logs:\n" + entries + text[end:])
    return root


BOTH = """  - path: logs/sacct.txt
  - path: logs/sm.json
    option: managed-endpoint
"""


def _records(root: Path) -> list[ev.Evidence]:
    return ev.load_all(root / "evidence")


def test_one_record_per_option_and_one_for_the_team(tmp_path: Path) -> None:
    """The workspace names the SageMaker log's option: a record of that option (its log
    only, the vendor's contour, no pool of the team's) and the team's workload (every log,
    written last: the profile the cost and the decision read as the newest)."""
    root = _workspace(tmp_path, BOTH)
    result = run_cli("profile", "--json", cwd=root)
    assert result.returncode == 0, result.stderr
    team, vendor = json.loads(result.stdout)["records"]
    assert "option" not in team and "contour" not in team
    assert vendor["option"] == "managed-endpoint"
    assert vendor["contour"] == {
        "executor": "vendor", "cluster": "", "context": "", "host": "", "storage": "",
        "artifacts": None,
    }  # fmt: skip
    assert vendor["jobs_total"] == 1 and team["jobs_total"] > vendor["jobs_total"]
    assert team["pool_gpus"] == 8 and vendor["pool_gpus"] is None  # the workspace's pool
    assert vendor["messages"]["summary"]["msgid"] == "option {option}: {summary}"
    records = _records(root)
    assert [ev.subject(r) for r in records] == [
        ("profile", "managed-endpoint"),
        ("profile", None),
    ]  # oldest first: the team's is the newest
    assert ev.latest(records, "profile") is records[1]
    inputs = {r.figures.get("option"): [i.path for i in r.inputs] for r in records}
    assert inputs == {
        None: ["logs/sacct.txt", "logs/sm.json"],
        "managed-endpoint": ["logs/sm.json"],
    }
    for record in records:  # the typed figures are the record's, key for key
        assert figures_of(record).model_dump(mode="json") == record.figures
    assert figures_of(records[0]).option == "managed-endpoint"
    assert figures_of(records[1]).option is None
    people = run_cli("profile", cwd=root).stdout
    assert people.index("profile of the team's workload (every log):") < people.index(
        "profile of option managed-endpoint:"
    )
    assert "option managed-endpoint: 1 successful full training" in people


def test_a_log_given_for_an_option_makes_that_option_s_record_only(tmp_path: Path) -> None:
    """`--option` names the option of the logs on the command line: its record, with the
    Slurm contour and its cluster, and no team's record (those logs are not the whole of
    the team's work); an unknown option, or one outside a workspace, is exit 2 naming
    --option with nothing written."""
    root = _workspace(tmp_path, BOTH)
    log = SACCT / "scenario.utc.txt"
    result = run_cli("profile", str(log), "--option", "owned-pool", "--json", cwd=root)
    assert result.returncode == 0, result.stderr
    f = json.loads(result.stdout)
    assert f["option"] == "owned-pool" and f["contour"]["executor"] == "slurm"
    sites = {s for s in load_logs([log]).attempts.column("site").to_pylist() if s}
    assert f["contour"]["cluster"] == (sites.pop() if len(sites) == 1 else "")
    assert [ev.subject(r) for r in _records(root)] == [("profile", "owned-pool")]
    for args, words in (
        (["--option", "nope"], "unknown option id 'nope'"),
        (["--option", "owned-pool", "--workspace", str(tmp_path / "none")], "no gpudecide"),
    ):
        bad = run_cli("profile", str(log), *args, cwd=root)
        assert bad.returncode == 2 and words in bad.stderr, bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1
    outside = run_cli("profile", str(log), "--option", "owned-pool", cwd=tmp_path)
    assert outside.returncode == 2 and "field '--option'" in outside.stderr
    assert len(_records(root)) == 1


@pytest.mark.parametrize(
    ("entries", "args", "field"),
    [
        # a SageMaker log named for the owned Slurm pool, by the flag and by the workspace
        (BOTH, ["logs/sm.json", "--option", "owned-pool"], "'--option'"),
        ("  - path: logs/sacct.txt\n    option: managed-endpoint\n", [], "'logs.0.option'"),
    ],
)
def test_a_log_of_another_platform_than_its_option_s_is_refused(
    tmp_path: Path, entries: str, args: list[str], field: str
) -> None:
    """A log of a known platform named for an option that declares another contour: exit 2
    naming the setting, nothing written (twin: the right option is read, above)."""
    root = _workspace(tmp_path, entries)
    result = run_cli("profile", *args, cwd=root)
    assert result.returncode == 2, result.stdout
    assert f"field {field}" in result.stderr and "options[].contour" in result.stderr
    assert _records(root) == []


def test_logs_of_no_option_keep_the_record_as_it_was(tmp_path: Path) -> None:
    """Twin: no log names an option: one record, without option, contour or marks; a
    SageMaker log among them is the team's workload, and a note says how to name it."""
    root = _workspace(tmp_path, "  - path: logs/sacct.txt\n  - path: logs/sm.json\n")
    f = json.loads(run_cli("profile", "--json", cwd=root).stdout)
    assert not {"option", "contour", "marks", "records"} & set(f)
    assert any("a managed vendor's job log (sagemaker) names no option" in n for n in f["notes"])


def test_a_missing_workspace_log_names_its_setting(tmp_path: Path) -> None:
    """A log the workspace lists that is not there: gpudecide.yaml, its line, `logs.1.path`
    and what to do, in the reader's language; nothing is read or written."""
    root = _workspace(tmp_path, BOTH)
    (root / "logs" / "sm.json").unlink()
    result = run_cli("profile", cwd=root)
    assert result.returncode == 2
    line = next(
        i
        for i, text in enumerate((root / "gpudecide.yaml").read_text().splitlines(), start=1)
        if "logs/sm.json" in text
    )
    assert result.stderr.startswith(
        f"error: {root / 'gpudecide.yaml'}:{line}: field 'logs.1.path': names 'logs/sm.json', "
        "which does not exist (put the log at that path, correct the path, or remove this "
        "entry from logs"
    ), result.stderr
    assert _records(root) == []
    ru = run_cli("--lang", "ru", "profile", cwd=root)
    assert ru.returncode == 2 and "положите журнал по этому пути" in ru.stderr
    # twin: given on the command line, the workspace's missing entry is not read
    given = run_cli("profile", str(root / "logs" / "sacct.txt"), cwd=root)
    assert given.returncode == 0, given.stderr


def _marks(folder: Path, lines: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return folder


# Job 41870 of the demo log ran 2026-06-01T06:00:36Z .. 06:44:36Z on kz-gpu-01.
RUN = [
    {"v": 1, "kind": "prep_start", "at": "2026-06-01T06:01:00Z", "slurm_job_id": "41870",
     "run": "a", "seq": 1},
    {"v": 1, "kind": "first_step", "at": "2026-06-01T06:04:00Z", "slurm_job_id": "41870",
     "run": "a", "seq": 2},
    {"v": 1, "kind": "first_step", "at": "2026-06-01T06:05:00Z", "host": "kz-gpu-01",
     "run": "b", "seq": 1},
    {"v": 1, "kind": "first_step", "at": "2026-06-01T06:05:00Z", "slurm_job_id": "1",
     "run": "c", "seq": 1},
]  # fmt: skip


def test_marks_of_the_workspace_and_of_the_flag_are_joined(tmp_path: Path) -> None:
    """The workspace's marks/ folder is read when there is one, --marks instead of it: the
    record holds the join (typed), its summary and notes; a run joined by job id and one
    by host and time (sacct's NodeList) are matched, one of an unknown job is not."""
    root = _workspace(tmp_path, "  - path: logs/sacct.txt\n")
    _marks(root / "marks", RUN)
    result = run_cli("profile", "--json", cwd=root)
    assert result.returncode == 0, result.stderr
    f = json.loads(result.stdout)
    assert (f["marks"]["matched"], f["marks"]["unmatched"]) == (2, 1)
    assert f["marks"]["fields"]["first_step"]["filled"] == 1
    assert f["marks"]["fields"]["prep_start"]["filled"] == 1
    assert "marks: 2 runs joined to their jobs; 0 ambiguous; 1 unmatched" in f["notes"]
    (record,) = _records(root)
    model = figures_of(record)
    assert model.marks is not None and model.marks.matched == 2
    assert model.model_dump(mode="json") == record.figures
    ru = run_cli("--lang", "ru", "profile", "--evidence-dir", str(tmp_path / "e"), cwd=root)
    assert "отмет" in ru.stdout, ru.stdout
    other = _marks(tmp_path / "elsewhere", RUN[:2])
    f = json.loads(run_cli("profile", "--json", "--marks", str(other), cwd=root).stdout)
    assert (f["marks"]["runs"], f["marks"]["matched"]) == (1, 1)


def test_marks_that_are_not_there_are_refused_and_none_is_no_join(tmp_path: Path) -> None:
    """`--marks` naming nothing: exit 2 naming --marks before any log is read, nothing
    written; twin: without a marks folder the record has no `marks`."""
    root = _workspace(tmp_path, "  - path: logs/sacct.txt\n")
    result = run_cli("profile", "--marks", str(tmp_path / "nowhere"), cwd=root)
    assert result.returncode == 2 and "field '--marks'" in result.stderr, result.stderr
    assert _records(root) == []
    f = json.loads(run_cli("profile", "--json", cwd=root).stdout)
    assert "marks" not in f and not any(n.startswith("marks:") for n in f["notes"])


def _rows(table: Any) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda r: (r["job_id"], r["attempt"]))


def test_the_part_of_a_log_is_the_log_of_those_sources(tmp_path: Path) -> None:
    """`JobLog.part`: the attempts, skipped rows, notes and duplicates of some of the logs
    read together, as if they had been read alone."""
    sacct = tmp_path / "sacct.txt"
    sacct.write_text(LOG_DATA.read_text() + "garbage|row|x\n")
    shutil.copy(SAGEMAKER, tmp_path / "sm.json")
    both = load_logs([sacct, tmp_path / "sm.json"], skip_bad_rows=True)
    for path in (sacct, tmp_path / "sm.json"):
        alone = load_logs([path], skip_bad_rows=True)
        part = both.part([path])
        assert _rows(part.attempts) == _rows(alone.attempts)
        assert [(b.path, b.line) for b in part.bad_rows] == [
            (b.path, b.line) for b in alone.bad_rows
        ]
        assert part.note_messages == alone.note_messages
        assert part.duplicate_rows == alone.duplicate_rows
        assert part.formats == alone.formats
    # the same log given twice: its rows are kept once, and the copy they were dropped from
    # counts them as its duplicates
    copy = tmp_path / "copy.txt"
    shutil.copy(LOG_DATA, copy)
    twice = load_logs([LOG_DATA, copy])
    n = load_logs([copy]).attempts.num_rows
    kept = {str(p): twice.part([p]).attempts.num_rows for p in (LOG_DATA, copy)}
    assert sorted(kept.values()) == [0, n]
    assert {s: twice.duplicates_by_source[s] for s in kept} == {s: n - k for s, k in kept.items()}


def test_the_profile_rules_score_from_the_team_s_workload_only(tmp_path: Path) -> None:
    """`jobs.rules.profile_rules`: every option's frequency from the team's workload, each
    utilisation named with its pool and window (en and ru); a record of one option's logs
    scores nothing (twin)."""
    from gpudecide import workspace
    from gpudecide.decision.context import RuleContext
    from gpudecide.i18n import speaking
    from gpudecide.jobs.rules import profile_rules
    from gpudecide.message import render

    root = _workspace(tmp_path, BOTH)
    assert run_cli("profile", cwd=root).returncode == 0
    vendor, team = _records(root)
    ws = workspace.load(root)
    ctx = RuleContext(ws.config.options)
    found = {f.option: f for f in profile_rules(team, ctx)}
    assert set(found) == {"owned-pool", "rented-pool", "managed-endpoint"}
    assert profile_rules(vendor, ctx) == []
    busy = team.figures["busy_share"]
    owned = found["owned-pool"]
    assert owned.criterion == "frequency" and owned.score == 1  # 6 % of the pool: band 1
    assert owned.rule.startswith(
        f"useful utilisation of the 8-GPU pool over the 8-week window {busy:.1%}: bands"
    ), owned.rule
    assert found["managed-endpoint"].score == 5  # bursty, unpredictable and rare
    assert owned.rule_message is not None
    with speaking("ru"):
        said = render(owned.rule_message)
    assert said.startswith("полезная загрузка пула из 8 GPU за 8-недельное окно"), said
