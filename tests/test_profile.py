"""Profile figures (SPEC F1-F3, C2) against values computed by hand on small logs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gpudecide.jobs.classify import ClassifyConfig, KindRule
from gpudecide.jobs.load import load_logs
from gpudecide.jobs.profile import ProfileOptions, build_profile

from .logs import job, write_csv

UNTIL = datetime(2026, 1, 19, tzinfo=UTC)


def _profile(path: Path, **kw: Any) -> dict[str, Any]:
    opts = ProfileOptions(**{"weeks": 2, "until": UNTIL, **kw})
    return build_profile(load_logs([path]), opts).figures


@pytest.fixture
def small(tmp_path: Path) -> Path:
    # Window: 2026-01-05 .. 2026-01-19 (two weeks).
    return write_csv(
        tmp_path / "small.csv",
        [
            # week 1: a 4-GPU training of 10 h and a 1-GPU eval of 2 h overlapping it -> 5 GPUs
            job("a", "ft-model-train", 4, "2026-01-05T00:00:00Z", "2026-01-05T10:00:00Z"),
            job("b", "eval-model", 1, "2026-01-05T05:00:00Z", "2026-01-05T07:00:00Z"),
            # week 2: a smoke run fails, is re-submitted under the same name and passes
            job("c", "smoke-model", 2, "2026-01-12T00:00:00Z", "2026-01-12T01:00:00Z", "failed"),
            job("d", "smoke-model", 2, "2026-01-12T02:00:00Z", "2026-01-12T03:00:00Z"),
            # cancelled while pending: never started, not a GPU job of the count
            job("e", "export-model", "", "", "", "cancelled", submit="2026-01-13T00:00:00Z"),
            # a CPU job: allocated, zero GPUs
            job("f", "tokenize", 0, "2026-01-13T00:00:00Z", "2026-01-13T05:00:00Z"),
        ],
    )


def test_f1_counts_every_related_job(small: Path) -> None:
    f = _profile(small)
    assert f["jobs_total"] == 4
    assert f["attempts_total"] == 4
    assert f["trainings_successful"] == 1
    assert f["jobs_by_kind"] == {
        "train": 1,
        "smoke": 1,
        "restart": 1,
        "eval": 1,
        "merge": 0,
        "quantize": 0,
        "export": 0,
        "other": 0,
    }
    assert f["restarts"] == 1 and f["restart_jobs"] == 1
    assert f["never_started"] == 1
    assert f["non_gpu_jobs"] == 1
    assert f["unsuccessful_share"] == 0.25
    assert f["gpu_hours_total"] == 46.0  # 40 + 2 + 2 + 2
    assert f["gpu_hours_by_kind"]["train"] == 40.0
    assert f["gpu_hours_by_kind"]["restart"] == 2.0
    assert f["useful_gpu_hours"] == 44.0  # the failed smoke's 2 GPU-hours are lost
    assert f["gpu_hours_lost_share"] == round(2 / 46, 3)


def test_f2_weeks_peak_and_shape(small: Path) -> None:
    f = _profile(small)
    assert [w["gpu_hours"] for w in f["weeks"]] == [42.0, 4.0]
    assert [w["jobs"] for w in f["weeks"]] == [2, 2]
    assert f["weeks"][0]["start"] == "2026-01-05T00:00:00Z"
    assert f["peak_concurrent_gpus"] == 5
    assert f["peak_at"] == "2026-01-05T05:00:00Z"
    assert f["gpus_per_attempt_mean"] == 2.25  # attempts of 4, 1, 2 and 2 GPUs
    b = f["burstiness"]
    assert b["weekly_gpu_hours_cv"] == round(19 / 23, 3)  # mean 23, population std 19
    assert b["mean_gpus_in_use"] == round(46 / 336, 3)  # 46 GPU-hours over 336 hours
    # the busiest 1% of 336 h (3.36 h): 5 GPUs for 2 h, then 4 GPUs for 8 h
    assert b["busiest_gpus_in_use"] == 4
    assert b["busiest_to_mean"] == round(4 / (46 / 336), 3)
    assert b["shape"] == "bursty"
    c = f["concentration"]
    assert c["top_jobs_gpu_hours_share"] == round(40 / 46, 3)  # top 10% of 4 jobs = 1 job
    assert c["largest_job_gpu_hours_share"] == round(40 / 46, 3)
    assert f["duration_hours"]["max"] == 10.0
    assert f["duration_hours"]["p50"] == 1.5  # durations 10, 2, 1, 1


def test_f3_predictability_and_busy_share(small: Path) -> None:
    f = _profile(small, pool_gpus=8)
    p = f["predictability"]
    assert p["wape"] == round(abs(4 - 42) / 4, 3)
    assert p["verdict"] == "unpredictable"
    assert "premature" in p["meaning"]
    assert p["thresholds"] == {"predictable_wape_max": 0.3, "partly_predictable_wape_max": 0.6}
    assert f["available_gpu_hours"] == 8 * 14 * 24.0
    assert f["busy_share"] == round(44 / (8 * 336), 4)
    assert f["occupied_share"] == round(46 / (8 * 336), 4)
    assert _profile(small)["busy_share"] is None


def test_equal_gpu_hours_different_shapes(tmp_path: Path) -> None:
    """SPEC F2: one big monthly run vs twenty short probes a week, both 1280 GPU-hours."""
    start = datetime(2025, 11, 24, tzinfo=UTC)  # 8 weeks before UNTIL
    iso = lambda t: t.strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: E731
    big = [
        job(
            f"b{i}",
            "ft-big-train",
            8,
            iso(start + timedelta(weeks=4 * i)),
            iso(start + timedelta(weeks=4 * i, hours=80)),
        )
        for i in range(2)
    ]
    probes = []
    for w in range(8):
        for k in range(20):
            t0 = start + timedelta(weeks=w, days=k % 5, hours=8 * (k // 5) // 2)
            probes.append(job(f"p{w}-{k}", "probe-lr", 1, iso(t0), iso(t0 + timedelta(hours=8))))
    a = _profile(write_csv(tmp_path / "big.csv", big), weeks=8)
    b = _profile(write_csv(tmp_path / "probes.csv", probes), weeks=8)
    assert a["gpu_hours_total"] == b["gpu_hours_total"] == 1280.0
    assert a["burstiness"]["weekly_gpu_hours_cv"] == round(3**0.5, 3)  # [640,0,0,0,640,0,0,0]
    assert b["burstiness"]["weekly_gpu_hours_cv"] == 0.0
    assert (a["burstiness"]["shape"], b["burstiness"]["shape"]) == ("bursty", "steady")
    assert (a["predictability"]["verdict"], b["predictability"]["verdict"]) == (
        "unpredictable",
        "predictable",
    )
    assert a["jobs_per_week_mean"] == 0.25 and b["jobs_per_week_mean"] == 20.0
    assert a["peak_concurrent_gpus"] == 8 and b["peak_concurrent_gpus"] == 2
    assert a["concentration"]["top_jobs_gpu_hours_share"] == 0.5
    assert b["concentration"]["top_jobs_gpu_hours_share"] == 0.1


def _weekly(start: datetime, weeks: int, jobs: list[tuple[str, int, float, float]]) -> list[Any]:
    """The same week `weeks` times: (name, GPUs, start hour in the week, hours) each."""
    iso = lambda t: t.strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: E731
    rows = []
    for w in range(weeks):
        for i, (name, gpus, at, hours) in enumerate(jobs):
            t0 = start + timedelta(weeks=w, hours=at)
            rows.append(job(f"{w}-{i}", name, gpus, iso(t0), iso(t0 + timedelta(hours=hours))))
    return rows


EIGHT_WEEKS = UNTIL - timedelta(weeks=8)
# A steady pipeline: every week one 8-GPU training of two days, and sixty 1-hour evals
# on one GPU each, spread over the week (issue 21: weekly variation 0.016 was called
# bursty because a tenth of the jobs held 78% of the GPU-hours).
EVALS = [(f"eval-{k}", 1, 2.0 + k * 2.7, 1.0) for k in range(60)]
PIPELINE = [("ft-big-train", 8, 0.0, 48.0), *EVALS]


def test_a_steady_pipeline_with_big_trainings_is_steady(tmp_path: Path) -> None:
    """Big trainings beside many small evals hold most GPU-hours (a high concentration),
    and the load is the same every week: steady, the concentration shown on its own."""
    f = _profile(write_csv(tmp_path / "p.csv", _weekly(EIGHT_WEEKS, 8, PIPELINE)), weeks=8)
    b, c = f["burstiness"], f["concentration"]
    assert c["top_jobs_gpu_hours_share"] >= 0.6  # the old rule called this bursty
    assert b["weekly_gpu_hours_cv"] < 0.05
    assert b["busiest_gpus_in_use"] == 9  # the training and an eval beside it
    assert b["busiest_to_mean"] == round(9 / ((384 + 60) / 168), 3)
    assert b["shape"] == "steady"
    assert f["predictability"]["verdict"] == "predictable"


def test_a_burst_within_steady_weeks_is_bursty(tmp_path: Path) -> None:
    """Twin: the same weekly GPU-hours, the training's 384 GPU-hours as 64 GPUs for six
    hours: every week looks alike (CV ~ 0), but the busiest moments need 64+ GPUs against a
    mean of 2.6 in use."""
    burst = [("ft-big-train", 64, 0.0, 6.0), *EVALS]
    f = _profile(write_csv(tmp_path / "b.csv", _weekly(EIGHT_WEEKS, 8, burst)), weeks=8)
    b = f["burstiness"]
    assert b["weekly_gpu_hours_cv"] < 0.05
    assert b["busiest_gpus_in_use"] >= 64 and b["busiest_to_mean"] > 8
    assert b["shape"] == "bursty"


def test_a_burst_over_weeks_is_bursty(tmp_path: Path) -> None:
    """Twin: the steady pipeline's eight weeks of work run in two of the eight."""
    rows = _weekly(EIGHT_WEEKS, 2, PIPELINE * 4)
    f = _profile(write_csv(tmp_path / "w.csv", rows), weeks=8)
    assert f["burstiness"]["weekly_gpu_hours_cv"] >= 0.75
    assert f["burstiness"]["shape"] == "bursty"


@pytest.mark.parametrize(("hours", "shape"), [(24.0, "steady"), (21.0, "bursty")])
def test_the_busiest_to_mean_threshold(tmp_path: Path, hours: float, shape: str) -> None:
    """One 8-GPU job a week and nothing else: running a seventh of the time its 8 GPUs are
    7 times the mean in use (steady); an eighth of the time, 8 times (bursty at >= 8)."""
    rows = _weekly(UNTIL - timedelta(weeks=2), 2, [("ft-train", 8, 0.0, hours)])
    b = _profile(write_csv(tmp_path / "t.csv", rows))["burstiness"]
    assert b["weekly_gpu_hours_cv"] == 0.0
    assert b["busiest_to_mean"] == round(168 / hours, 3)
    assert b["shape"] == shape


def test_lead_time_share(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "lead.csv",
        [
            job(
                "a",
                "eval-weekly",
                1,
                "2026-01-12T06:00:00Z",
                "2026-01-12T09:00:00Z",
                submit="2026-01-09T17:00:00Z",
                eligible="2026-01-12T06:00:00Z",
                wait_reason="BeginTime",
            ),
            job(
                "b",
                "eval-adhoc",
                1,
                "2026-01-12T06:00:00Z",
                "2026-01-12T07:00:00Z",
                eligible="2026-01-12T06:00:00Z",
            ),
            job(
                "c",
                "merge",
                1,
                "2026-01-14T06:00:00Z",
                "2026-01-14T08:00:00Z",
                submit="2026-01-12T06:00:00Z",
                eligible="2026-01-14T06:00:00Z",
                wait_reason="Dependency",
            ),
        ],
    )
    f = _profile(path)
    assert f["predictability"]["lead_time_share"] == round(3 / 6, 3)


def test_requeue_attempts_are_restarts(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "rq.csv",
        [
            job("9", "ft-x-train", 2, "2026-01-06T00:00:00Z", "2026-01-06T03:00:00Z", "requeued"),
            job(
                "9",
                "ft-x-train",
                2,
                "2026-01-06T04:00:00Z",
                "2026-01-06T10:00:00Z",
                submit="2026-01-06T03:00:00Z",
            ),
        ],
    )
    f = _profile(path)
    assert f["jobs_total"] == 1 and f["attempts_total"] == 2
    assert f["restarts"] == 1 and f["requeue_attempts"] == 1 and f["restart_jobs"] == 0
    assert f["trainings_successful"] == 1
    assert f["gpu_hours_by_kind"]["train"] == 6.0  # the first attempt
    assert f["gpu_hours_by_kind"]["restart"] == 12.0  # the re-run after the requeue


def test_labels_and_team_rules(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "k.csv",
        [
            job("1", "lm-harness-mmlu", 1, "2026-01-06T00:00:00Z", "2026-01-06T01:00:00Z"),
            job("2", "nightly", 1, "2026-01-06T00:00:00Z", "2026-01-06T01:00:00Z", kind="merge"),
            job(
                "3",
                "eval-but-labelled",
                1,
                "2026-01-06T00:00:00Z",
                "2026-01-06T01:00:00Z",
                kind="export",
            ),
        ],
    )
    f = _profile(path)
    assert f["jobs_by_kind"]["other"] == 1 and f["jobs_by_kind"]["merge"] == 1
    assert f["jobs_by_kind"]["export"] == 1  # label beats the eval name rule
    cfg = ClassifyConfig(extra_rules=[KindRule(kind="eval", pattern="^lm-harness")])
    g = _profile(path, classify=cfg)
    assert g["jobs_by_kind"]["eval"] == 1 and g["jobs_by_kind"]["other"] == 0
    assert g["kind_sources"] == {"label": 2, "name rule": 1}


def test_resubmission_outside_window_is_not_a_restart(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "w.csv",
        [
            job("1", "ft-a-train", 1, "2026-01-05T00:00:00Z", "2026-01-05T01:00:00Z", "failed"),
            job("2", "ft-a-train", 1, "2026-01-09T02:00:00Z", "2026-01-09T03:00:00Z"),
        ],
    )
    assert _profile(path)["restarts"] == 0  # 4 days later, window is 72 h
    cfg = ClassifyConfig(restart_window_hours=120)
    assert _profile(path, classify=cfg)["restarts"] == 1


def _records(tmp_path: Path) -> list[Any]:
    """Profile records as the commands write them: the small log with a pool it overflows,
    a log with a malformed row skipped and a job still running, and the demo's log."""
    from gpudecide.jobs.demo import LOG_DATA
    from gpudecide.jobs.profile import to_evidence

    small = write_csv(
        tmp_path / "pool.csv",
        [
            job("a", "ft-model-train", 4, "2026-01-05T00:00:00Z", "2026-01-05T10:00:00Z"),
            job("b", "eval-model", 1, "2026-01-05T05:00:00Z", "2026-01-05T07:00:00Z"),
        ],
    )
    bad = write_csv(
        tmp_path / "bad.csv",
        [
            job("a", "ft-model-train", 4, "2026-01-12T00:00:00Z", "", "running"),
            job("b", "eval-model", "many", "2026-01-12T05:00:00Z", "2026-01-12T07:00:00Z"),
        ],
    )
    results = [
        build_profile(load_logs([small]), ProfileOptions(weeks=2, until=UNTIL, pool_gpus=2)),
        build_profile(load_logs([bad], skip_bad_rows=True), ProfileOptions(weeks=2, until=UNTIL)),
        build_profile(load_logs([LOG_DATA])),
    ]
    return [(r, to_evidence(r, [])) for r in results]


def test_the_figures_model_holds_the_record_key_for_key(tmp_path: Path) -> None:
    """The typed figures (jobs.profile_figures) dump to exactly the dict the record holds:
    its content hash does not change."""
    from gpudecide.jobs.profile_figures import ProfileFigures, figures_of

    records = _records(tmp_path)
    assert records[0][0].model.peak_exceeds_pool is True
    assert records[1][0].model.skipped_rows == 1 and records[1][0].model.skipped[0].line == 3
    for result, record in records:
        assert ProfileFigures.model_validate(result.figures).model_dump(mode="json") == (
            result.figures
        )
        dumped = figures_of(record).model_dump(mode="json")
        assert dumped == record.figures
        again = record.model_copy(update={"figures": dumped})
        assert again.compute_content_sha256() == record.compute_content_sha256()


def test_figures_of_refuses_another_kind_and_another_shape(tmp_path: Path) -> None:
    """Negative: a record of another kind is refused; figures an edit broke name the field."""
    from pydantic import ValidationError

    from gpudecide.jobs.profile_figures import figures_of

    _result, record = _records(tmp_path)[0]
    with pytest.raises(LookupError):
        figures_of(record.model_copy(update={"kind": "queue"}))
    broken = {**record.figures, "window": {**record.figures["window"], "weeks": "two"}}
    with pytest.raises(ValidationError, match=r"window\.weeks"):
        figures_of(record.model_copy(update={"figures": broken}))
    without_series = {k: v for k, v in record.figures.items() if k != "series"}
    with pytest.raises(ValidationError, match="series"):
        figures_of(record.model_copy(update={"figures": without_series}))


def test_each_figure_is_said_with_its_name_and_its_numbers(tmp_path: Path) -> None:
    """`gpudecide profile` says the shape from time, the concentration as its own figure,
    each utilisation with its name, pool and window, and what WAPE is, in en and ru; the
    numbers in each sentence are the record's."""
    import json

    from typer.testing import CliRunner

    from gpudecide.cli import app

    log = write_csv(tmp_path / "p.csv", _weekly(EIGHT_WEEKS, 8, PIPELINE))
    args = ["profile", str(log), "--pool-gpus", "8", "--until", UNTIL.isoformat()]
    args += ["--evidence-dir", str(tmp_path / "ev")]
    runner = CliRunner()
    f = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    en = runner.invoke(app, ["--lang", "en", *args]).stdout
    b, c = f["burstiness"], f["concentration"]
    assert (
        f"shape: steady (weekly GPU-hours CV {b['weekly_gpu_hours_cv']}, bursty at >= 0.75; "
        f"{b['busiest_gpus_in_use']} GPUs in use in the busiest 1% of the window, "
        f"{b['busiest_to_mean']} times the mean of {b['mean_gpus_in_use']}, bursty at >= 8.0)"
    ) in en
    assert (
        f"concentration: the largest 10% of jobs hold {c['top_jobs_gpu_hours_share']:.1%} of "
        "GPU-hours"
    ) in en
    assert (
        "useful utilisation of the 8-GPU pool over the 8-week window: "
        f"{f['busy_share']:.1%} (completed attempts, of 10,752 GPU-hours around the clock)"
    ) in en
    assert (
        f"occupied utilisation of the 8-GPU pool over the 8-week window: {f['occupied_share']:.1%}"
    ) in en
    assert "busy share" not in en
    wape = en.index("WAPE (weighted absolute percentage error)")
    assert en.index(f"WAPE {f['predictability']['wape']}") < wape  # right after its first use
    ru = runner.invoke(app, ["--lang", "ru", *args]).stdout
    busy = f"{f['busy_share']:.1%}".replace(".", ",")
    assert f"полезная загрузка пула из 8 GPU за 8-недельное окно: {busy}" in ru
    assert "концентрация: крупнейшие 10% заданий" in ru and "форма: равномерная" in ru
    assert "WAPE (взвешенная абсолютная процентная ошибка)" in ru


def test_the_report_names_each_figure(tmp_path: Path) -> None:
    """The report's rows: the shape from time, the concentration apart, the utilisations
    with pool and window, WAPE explained next to the predictability; in kk the terms of
    the source article (күрт өсетін)."""
    from gpudecide.i18n import speaking
    from gpudecide.jobs.profile import to_evidence
    from gpudecide.jobs.report import profile_section
    from gpudecide.report.model import Section

    burst = [("ft-big-train", 64, 0.0, 6.0), *EVALS]
    log = write_csv(tmp_path / "b.csv", _weekly(EIGHT_WEEKS, 8, burst))
    result = build_profile(load_logs([log]), ProfileOptions(weeks=8, until=UNTIL, pool_gpus=72))
    record = to_evidence(result, [])
    rows: dict[str, dict[str, str]] = {}
    for lang in ("en", "kk"):
        section = Section("profile", "", record, "fresh", "", [])
        with speaking(lang):
            profile_section(section)
        rows[lang] = {r[0]: r[1] for t in section.tables for r in t.rows}
    en = rows["en"]
    f = result.model
    assert en["shape (F2)"].startswith("bursty (bursty when CV >= 0.75 or the busiest GPUs")
    assert en["GPUs in use in the busiest 1% of the window (F2)"].startswith(
        f"{f.burstiness.busiest_gpus_in_use}: "
    )
    assert en["concentration: GPU-hours in the largest 10% of jobs (F2)"].startswith(
        f"{f.concentration.top_jobs_gpu_hours_share:.1%}, the largest job"
    )
    useful = en["useful utilisation of the 72-GPU pool over the 8-week window (C2)"]
    assert useful == f"{f.busy_share:.1%}"
    assert en["occupied utilisation of the 72-GPU pool over the 8-week window"] == (
        f"{f.occupied_share:.1%}"
    )
    assert en["what WAPE is"].startswith("WAPE (weighted absolute percentage error)")
    assert any(v.startswith("күрт өсетін") for v in rows["kk"].values())
