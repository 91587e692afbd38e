"""A pool that cannot hold every job never reads better than it is (issue 22): the replay
names the jobs it cannot hold with their GPU counts, counts them as SLO violations (said
in the record, the table caption and the rule), names each utilisation with its pool size
and window, and no sentence of the record contradicts its numbers.

Counts are by hand on a small log; each rule has its twin that must not trigger.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gpudecide import evidence as ev
from gpudecide.decision.context import RuleContext
from gpudecide.findings import StopFactor
from gpudecide.i18n import speaking
from gpudecide.jobs.classify import ClassifyConfig
from gpudecide.jobs.load import load_logs
from gpudecide.matrix_config import MatrixConfig
from gpudecide.options import OptionDecl
from gpudecide.queue.analysis import ReplayFigures, replay_evidence, replay_input, run_replay
from gpudecide.queue.figures import replay_figures
from gpudecide.queue.report import replay_section
from gpudecide.queue.rules import replay_rules
from gpudecide.queue.slo import SLO
from gpudecide.queue.words import cannot_hold
from gpudecide.report.model import Section

from .logs import job, write_csv

T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)


def _log(path: Path) -> Path:
    """Ten jobs, an hour apart, each running 30 min: sizes 1,1,2,8,1,1,16,2,1,8 GPUs. A
    2-GPU pool cannot hold the two 8-GPU jobs nor the 16-GPU one; an 8-GPU pool only the
    16-GPU one; every job starts when it arrives on a pool that holds it."""
    sizes = [1, 1, 2, 8, 1, 1, 16, 2, 1, 8]
    rows = []
    for i, gpus in enumerate(sizes):
        start = T0 + timedelta(hours=i)
        rows.append(
            job(
                str(100 + i),
                f"train-{i}",
                gpus,
                start.isoformat(),
                (start + timedelta(minutes=30)).isoformat(),
                kind="train",
            )
        )
    return write_csv(path, rows)


def _replay(tmp_path: Path, slo: SLO | None, sizes: list[int]) -> ev.Evidence:
    tmp_path.mkdir(parents=True, exist_ok=True)
    data = replay_input(load_logs([_log(tmp_path / "log.csv")]), ClassifyConfig(), "full")
    named = ("normal", slo) if slo else None
    figures = run_replay(data, sizes, "fifo", named)
    return ev.load(ev.write(replay_evidence(figures, []), tmp_path / "evidence"))


SLO_ALL = SLO(threshold_minutes=10, allowed_violation_share=0.1)


def test_the_jobs_a_pool_cannot_hold_are_named_with_their_gpus(tmp_path: Path) -> None:
    record = _replay(tmp_path, SLO_ALL, [2, 8, 16])
    f = replay_figures(record)
    two, eight, sixteen = f.pools
    assert two.jobs == 7 and two.jobs_unplaceable == 3
    assert [(u.gpus, u.jobs) for u in two.unplaceable or []] == [(8, 2), (16, 1)]
    assert [(u.gpus, u.jobs) for u in eight.unplaceable or []] == [(16, 1)]
    assert sixteen.unplaceable == [] and sixteen.held and not two.held
    # The SLO share counts the jobs a pool cannot hold as violations: 3 of 10, 1 of 10, 0.
    assert (two.slo_violation_share, two.slo_jobs, two.slo_unplaceable) == (0.3, 10, 3)
    assert (eight.slo_violation_share, eight.slo_jobs, eight.slo_unplaceable) == (0.1, 10, 1)
    assert (sixteen.slo_violation_share, sixteen.slo_unplaceable) == (0.0, 0)
    # Only a pool that holds every job can be recommended, even when its share is allowed.
    assert f.recommended_gpus == 16
    assert f.model_dump(mode="json") == record.figures


def test_without_an_slo_the_pool_still_names_what_it_cannot_hold(tmp_path: Path) -> None:
    f = replay_figures(_replay(tmp_path, None, [2]))
    [two] = f.pools
    assert [(u.gpus, u.jobs) for u in two.unplaceable or []] == [(8, 2), (16, 1)]
    assert two.slo_jobs is None and two.slo_violation_share is None
    dumped = f.model_dump(mode="json")["pools"][0]
    assert "slo_jobs" not in dumped and "unplaceable" in dumped


_POOL = re.compile(
    r"(?P<gpus>\d+) GPUs: (?:cannot hold (?P<never>[^;]+); p95 wait of the (?P<held>\d+) jobs? "
    r"it holds|p95 wait) (?P<wait>[\d.]+) h, occupied utilisation (?P<util>\d+)%"
)


def test_the_summary_says_what_the_figures_say(tmp_path: Path) -> None:
    """Every pool phrase of the summary against its pool's figures: the GPUs, the jobs it
    cannot hold (by GPUs) and holds, the p95 wait and the utilisation, as rounded."""
    record = _replay(tmp_path, SLO_ALL, [2, 8, 16])
    f = replay_figures(record)
    phrases = {int(m["gpus"]): m for m in _POOL.finditer(record.summary)}
    assert sorted(phrases) == [2, 8, 16], record.summary
    for p in f.pools:
        m = phrases[p.gpus]
        assert float(m["wait"]) == round((p.wait_p95_s or 0) / 3600, 1)
        assert int(m["util"]) == round((p.utilisation or 0) * 100)
        if p.held:
            assert m["never"] is None
            continue
        assert int(m["held"]) == p.jobs
        said = re.findall(r"(\d+) jobs? of (\d+) GPUs", m["never"])
        assert [(int(g), int(n)) for n, g in said] == [
            (u.gpus, u.jobs) for u in p.unplaceable or []
        ]
    assert "smallest pool meeting SLO normal: 16 GPUs" in record.summary


def test_the_record_says_how_utilisation_and_short_pools_are_counted(tmp_path: Path) -> None:
    record = _replay(tmp_path, SLO_ALL, [2, 16])
    util = [n for n in record.notes if n.startswith("occupied utilisation of each pool")]
    assert util == [
        "occupied utilisation of each pool, replay of the full window, 2026-03-02 to "
        "2026-03-02: GPU-hours of the jobs it ran over its GPUs times the window; the jobs it "
        "cannot hold are not in it"
    ]
    assert (
        "1 pool size cannot hold every job (2 GPUs): its waits are of the jobs it holds, and "
        "its SLO share counts the jobs it cannot hold as violations"
    ) in record.notes
    # twins: pools that hold everything say nothing of it; without an SLO no SLO clause
    held = _replay(tmp_path / "held", SLO_ALL, [16])
    assert not any("cannot hold every job" in n for n in held.notes)
    plain = _replay(tmp_path / "plain", None, [2])
    assert "1 pool size cannot hold every job (2 GPUs): its waits are of the jobs it holds" in (
        plain.notes
    )
    assert not any("SLO share" in n for n in plain.notes)


def _section(record: ev.Evidence) -> Section:
    section = Section("replay", "", record, "fresh", "fresh", [])
    replay_section(section)
    return section


def test_the_report_table_shows_what_a_pool_cannot_hold(tmp_path: Path) -> None:
    record = _replay(tmp_path, SLO_ALL, [2, 8, 16])
    table = _section(record).tables[-1]
    col = table.headers.index("jobs it cannot hold")
    assert [row[col] for row in table.rows] == ["2 of 8 GPUs, 1 of 16 GPUs", "1 of 16 GPUs", "0"]
    assert table.headers[table.headers.index("jobs it cannot hold") + 2] == "occupied utilisation"
    assert "replay of the full window, 2026-03-02 to 2026-03-02" in table.caption
    assert "counts the jobs a pool cannot hold as violations" in table.caption
    plain = _section(_replay(tmp_path / "plain", None, [2])).tables[-1]
    assert "violations" not in plain.caption and "occupied utilisation" in plain.caption


@pytest.mark.parametrize("lang, words", [("ru", "2 на 8 GPU"), ("kk", "8 GPU-ға 2")])
def test_the_table_speaks_the_readers_language(tmp_path: Path, lang: str, words: str) -> None:
    record = _replay(tmp_path, SLO_ALL, [2])
    with speaking(lang):  # type: ignore[arg-type]
        table = _section(record).tables[-1]
    assert any(words in cell for cell in table.rows[0])
    assert "full window" not in table.caption


def test_a_record_from_before_the_gpu_counts_says_how_many() -> None:
    assert cannot_hold(3, None) == "3" and cannot_hold(0, None) == "0"
    assert cannot_hold(3, [(8, 2), (16, 1)]) == "2 of 8 GPUs, 1 of 16 GPUs"


# --- the replay rule reads the same ---------------------------------------------------------


def _ctx(hard: list[str]) -> RuleContext:
    options = [OptionDecl.model_validate({"id": "own", "kind": "owned"})]
    cost = ev.Evidence(
        kind="cost",
        title="cost",
        spec_ids=[],
        verdict="info",
        summary="",
        figures={"options": [{"id": "own", "peak_check": {"pool_gpus": 8}}]},
    )
    matrix = MatrixConfig.model_validate({"slo": {"hard": hard}})
    return RuleContext(options, matrix, {("cost", None, None): cost})


def _pool_record(pool: dict[str, Any]) -> ev.Evidence:
    base = {
        "gpus": 8,
        "jobs": 100,
        "jobs_unplaceable": 0,
        "slo_violation_share": 0.5,
    }
    return ev.Evidence(
        kind="replay",
        title="replay",
        spec_ids=[],
        verdict="info",
        summary="",
        figures={
            "window": {"kind": "peak"},
            "slo": {"name": "urgent", "allowed_violation_share": 0.05},
            "pools": [{**base, **pool}],
        },
    )


def test_a_pool_that_cannot_hold_jobs_scores_1_naming_the_largest(tmp_path: Path) -> None:
    record = _replay(tmp_path, SLO_ALL, [8])
    found = replay_rules(record, _ctx([]))
    [score] = found
    assert score.score == 1
    assert "1 job larger than the pool never runs (the largest needs 16 GPUs)" in score.rule


def test_the_hard_stop_counts_the_jobs_the_slo_selects() -> None:
    """50 % of the SLO's jobs wait too long: a stop with 40 of them, none with 20 (too few
    to stop an option), whatever the pool ran besides."""
    stops = [f for f in replay_rules(_pool_record({"slo_jobs": 40}), _ctx(["urgent"]))]
    [stop] = [f for f in stops if isinstance(f, StopFactor)]
    assert "of the 40 jobs it selects wait too long on 8 GPUs" in stop.rule
    few = replay_rules(_pool_record({"slo_jobs": 20}), _ctx(["urgent"]))
    assert not [f for f in few if isinstance(f, StopFactor)]
    soft = replay_rules(_pool_record({"slo_jobs": 40}), _ctx([]))
    assert not [f for f in soft if isinstance(f, StopFactor)]
    # an older record without slo_jobs: every replayed job stands in for them
    old = replay_rules(_pool_record({}), _ctx(["urgent"]))
    assert [f for f in old if isinstance(f, StopFactor)]


def test_older_records_without_the_new_keys_still_read() -> None:
    figures = ReplayFigures.model_validate(
        {
            "window": {
                "kind": "full",
                "start": "2026-01-01T00:00:00Z",
                "end": "2026-01-02T00:00:00Z",
            },
            "policy": "fifo",
            "jobs": 1,
            "slo": None,
            "pools": [
                {
                    "gpus": 1,
                    "policy": "fifo",
                    "jobs": 1,
                    "jobs_unplaceable": 2,
                    "wait_p50_s": 0.0,
                    "wait_p90_s": 0.0,
                    "wait_p95_s": 0.0,
                    "wait_p99_s": 0.0,
                    "wait_max_s": 0.0,
                    "wait_mean_s": 0.0,
                    "slo_violation_share": None,
                    "utilisation": 0.1,
                    "longest_queue": 0,
                    "preemptions": 0,
                    "lost_gpu_hours": 0.0,
                }
            ],
            "recommended_gpus": None,
            "zero_wait_peak_gpus": 1,
            "largest_job_gpus": 4,
        }
    )
    pool = figures.pools[0]
    assert pool.unplaceable is None and "unplaceable" not in pool.model_dump(mode="json")
    assert cannot_hold(pool.jobs_unplaceable, None) == "2"
