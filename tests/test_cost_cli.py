"""`gpudecide cost` as users run it, and its report section (SPEC C1-C10, V2).

The command is tested on a fresh typer app through `register(app)`, and, once the main CLI
has it, through the real console script in a separate process.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.cost import schema
from gpudecide.cost.cli import register
from gpudecide.cost.demo import demo_costs_yaml
from gpudecide.cost.figures import figures_of
from gpudecide.cost.runs import run_cost
from gpudecide.demo import CONFIG_DATA as DEMO_CONFIG
from gpudecide.errors import InputError
from gpudecide.i18n import speaking
from gpudecide.report import render
from gpudecide.sections import SECTIONS

from .conftest import run_cli
from .test_cost_fixtures import profile_record, replay_record


def _app() -> typer.Typer:
    app = typer.Typer(pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:
        """Test shell."""

    register(app)
    return app


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with the demo team's costs and a hand-made profile record."""
    root = tmp_path / "ws"
    workspace.init(root)
    (root / workspace.CONFIG_NAME).write_bytes(DEMO_CONFIG.read_bytes())  # declares the options
    (root / schema.COSTS_NAME).write_text(demo_costs_yaml())
    ev.write(profile_record(), root / "evidence")
    return root


def test_workspace_run_writes_cost_evidence(ws: Path) -> None:
    res = CliRunner().invoke(_app(), ["cost", str(ws), "--json"])
    assert res.exit_code == 0, res.output
    body = json.loads(res.stdout)
    assert body["currency"] == "KZT" and body["verdict"] == "warn"
    # The hybrid's 2-GPU base (standalone: false) is costed inside the hybrid only.
    assert [o["id"] for o in body["options"]] == [
        "owned-8xh100",
        "rented-8gpu",
        "managed-ft",
        "kz-local",
        "hybrid-kz",
    ]
    hybrid = body["options"][-1]["regimes"]["normal"]["lines"]
    assert any(ln["label"].startswith("base kz-rented-2gpu: pool: 2 GPUs") for ln in hybrid)
    record = ev.load(Path(body["evidence"]))
    assert record.kind == "cost" and record.spec_ids[-1] == "V2" and "C8" in record.spec_ids
    assert [i.path for i in record.inputs] == [
        "costs.yaml",
        f"evidence/{profile_record().id}.json",
    ]
    assert ev.freshness(record, ws)[0] is ev.Freshness.FRESH
    owned = next(o for o in body["options"] if o["id"] == "owned-8xh100")
    assert set(owned["regimes"]["normal"]["components"]) == {
        "compute",
        "storage",
        "data_transfer",
        "platform_ops",
        "engineer_labour",
        "waiting_cost",
    }
    assert owned["reversibility"]["commitment_months_left"] == 12
    assert any("only above" in f for f in body["findings"])


def test_human_output(ws: Path) -> None:
    res = CliRunner().invoke(_app(), ["cost", str(ws)])
    assert res.exit_code == 0, res.output
    assert "cheapest normal month:" in res.stdout
    assert "break-even owned-8xh100 vs managed-ft" in res.stdout
    assert "finding:" in res.stdout and "evidence:" in res.stdout


def test_costs_file_with_profile_and_replay(ws: Path, tmp_path: Path) -> None:
    profile = next((ws / "evidence").glob("profile-*.json"))
    pools = [{"gpus": 8, "wait_p95_s": 3600, "jobs_unplaceable": 0}]
    replay = ev.write(replay_record(pools), tmp_path / "other")
    out = tmp_path / "out"
    res = CliRunner().invoke(
        _app(),
        [
            "cost",
            str(ws / schema.COSTS_NAME),
            "--profile",
            str(profile),
            "--replay",
            str(replay),
            "--evidence-dir",
            str(out),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    body = json.loads(res.stdout)
    assert Path(body["evidence"]).parent == out
    owned = next(o for o in body["options"] if o["id"] == "owned-8xh100")
    check = owned["peak_check"]
    # Jobs waited an hour at p95 and no SLO says whether that is acceptable: unsettled.
    assert check["source"] == "replay" and check["outcome"] == "unsettled"
    assert check["absorbs"] is None and "no SLO says whether these waits" in check["meaning"]
    assert body["replay_evidence"] == [ev.load(replay).id]


def test_workspace_uses_its_newest_replay(ws: Path) -> None:
    ev.write(replay_record([{"gpus": 8, "jobs_unplaceable": 3}]), ws / "evidence")
    run = run_cost(ws)
    owned = next(o for o in run.result.figures["options"] if o["id"] == "owned-8xh100")
    assert owned["peak_check"]["absorbs"] is False
    assert owned["peak_check"]["outcome"] == "never_fits"
    assert owned["peak_check"]["meaning"].startswith("3 jobs larger than the pool (8 GPUs)")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["costs.yaml"], "needs --profile EVIDENCE"),
        (["missing-dir/"], "no such file or directory"),
    ],
)
def test_usage_errors_exit_2(ws: Path, args: list[str], words: str) -> None:
    res = CliRunner().invoke(_app(), ["cost", *[str(ws / a) for a in args]])
    assert res.exit_code == 2
    assert words in res.stderr and "Traceback" not in res.output


def test_bad_costs_exit_2_with_line_and_field(ws: Path) -> None:
    costs = ws / schema.COSTS_NAME
    text = costs.read_text().replace(
        "price_per_gpu_hour: {amount: 2650,", "price_per_gpu_hour: {amount: -2650,"
    )
    costs.write_text(text)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "-2650" in ln)
    res = CliRunner().invoke(_app(), ["cost", str(ws)])
    assert res.exit_code == 2
    assert f"costs.yaml:{line}: field 'managed.0.price_per_gpu_hour.amount'" in res.stderr
    res = CliRunner().invoke(_app(), ["cost", str(ws), "--json"])
    assert res.exit_code == 2
    err = json.loads(res.stdout)
    assert err["field"] == "managed.0.price_per_gpu_hour.amount" and err["line"] == line
    assert not list((ws / "evidence").glob("cost-*.json"))  # nothing written


def test_wrong_kind_of_evidence(ws: Path, tmp_path: Path) -> None:
    replay = ev.write(replay_record([]), tmp_path)
    with pytest.raises(InputError, match="is a 'replay' record, not 'profile'"):
        run_cost(ws, profile=replay)


def test_no_profile_in_workspace(tmp_path: Path) -> None:
    workspace.init(tmp_path)
    with pytest.raises(InputError, match="no profile evidence") as exc:
        run_cost(tmp_path)
    assert "gpudecide profile" in (exc.value.hint or "")


def test_report_section(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_cost(ws)
    # Only the cost record: the hand-made profile record lacks what the profile section shows.
    records = [r for r in ev.load_all(ws / "evidence") if r.kind == "cost"]
    report = render.build(records, ws, SECTIONS)
    html = render.to_html(report)
    section = html[html.index('data-kind="cost"') :]
    for title in (
        "Monthly cost by component",
        "Cost per useful GPU-hour against utilisation",
        "Inputs moved -20 % / +20 %: what moves the decision",
    ):
        assert f'role="img" aria-label="{title}' in section
    assert "quote Q-2026-031 §2" in section  # every price shows its source (C5)
    assert "team estimate, planning meeting 2026-05-12" in section  # C7 assumption, labelled
    assert "Reversibility of every option" in section
    assert "<script" not in section
    md = render.to_markdown(report)
    assert "Every component (C1-C3)" in md
    with speaking("ru"):
        ru = render.to_html(render.build(records, ws, SECTIONS))
    assert "Стоимость: обычный, пиковый и пустой месяц" in ru
    with speaking("kk"):
        kk = render.to_html(render.build(records, ws, SECTIONS))
    assert "Құны: қалыпты, ең жоғары жүктемелі және бос ай" in kk


def test_demo_end_to_end(tmp_path: Path) -> None:
    """The demo workspace: its real 8-week sacct log, profiled, then costed."""
    from gpudecide import demo
    from gpudecide.jobs import profile as prof
    from gpudecide.jobs.load import load_logs

    w = demo.create(tmp_path / "demo")
    (w.root / schema.COSTS_NAME).write_text(demo_costs_yaml())
    log = load_logs(w.log_paths(), tz=w.config.timezone)
    result = prof.build_profile(log, prof.ProfileOptions(weeks=8, pool_gpus=8))
    ev.write(
        prof.to_evidence(result, [ev.input_ref(p, w.root) for p in w.log_paths()]),
        w.evidence_dir,
    )
    run = run_cost(w.root)
    f = run.result.figures
    # The record keeps exactly what CostFigures gives back (SPEC C1-C10 figures, typed).
    assert run.written is not None
    record = ev.load(run.written)
    assert figures_of(record).model_dump(mode="json") == record.figures == f
    # At the demo team's ~5 % busy share, no dedicated 8-GPU pool is cheapest in any month.
    assert all(f["cheapest"][r] in {"managed-ft", "kz-local"} for r in ("normal", "empty"))
    found = [p for p in f["break_even"] if p["finding"]]
    assert {p["dedicated"] for p in found} == {"owned-8xh100", "rented-8gpu"}
    assert f["sensitivity"]["inputs"]


def test_real_process(ws: Path) -> None:
    assert run_cli("cost", "--help").returncode == 0, "cost is not registered"
    res = run_cli("cost", "--json", cwd=ws)
    assert res.returncode == 0, res.stderr
    body = json.loads(res.stdout)
    assert (ws / body["evidence"]).is_file()  # relative to the workspace, or absolute
    costs = ws / schema.COSTS_NAME
    costs.write_text(costs.read_text().replace("hours_per_month: 64", "hours_per_month: 0"))
    costs.write_text(costs.read_text().replace("hours_per_month: 12", "hours_per_month: 0"))
    costs.write_text(costs.read_text().replace("hours_per_month: 6\n", "hours_per_month: 0\n", 1))
    res = run_cli("cost", str(ws))
    assert res.returncode == 2 and res.stdout == ""
    assert re.search(r"costs\.yaml:\d+: field 'owned\.0\.labour': no engineer hours", res.stderr)
    assert "SPEC C6" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_profile_record_missing_a_figure_names_its_file(ws: Path, tmp_path: Path) -> None:
    broken = profile_record()
    broken.figures.pop("weeks")
    path = ev.write(broken.model_copy(update={"content_sha256": ""}), tmp_path)
    with pytest.raises(InputError) as exc:
        run_cost(ws, profile=path)
    assert exc.value.path == str(path) and exc.value.field == "figures.weeks"


def test_workspace_option_like_the_other_commands(ws: Path) -> None:
    res = CliRunner().invoke(_app(), ["cost", "-w", str(ws), "--json"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(_app(), ["cost", str(ws), "-w", str(ws)])
    assert res.exit_code == 2 and "give the workspace once" in res.stderr


@pytest.mark.browser
def test_cost_section_in_chromium(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The three cost charts are drawn at a readable size, offline, without script errors."""
    import os
    import shutil

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(chromium):
        if os.environ.get("GPUDECIDE_REQUIRE_BROWSER") == "1":
            pytest.fail("GPUDECIDE_REQUIRE_BROWSER=1 but Chromium is not installed")
        pytest.skip("Chromium not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    run_cost(ws)
    records = [r for r in ev.load_all(ws / "evidence") if r.kind == "cost"]
    html = render.write(render.build(records, ws, SECTIONS), ws / "report")["html"]
    requests: list[str] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        page = browser.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(html.as_uri())
        section = page.locator("section[data-kind=cost]")
        assert "cheapest normal month" in section.inner_text()
        charts = section.locator("svg[role=img]")
        assert charts.count() == 3
        for i in range(3):
            box = charts.nth(i).bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 150
        legend = charts.nth(0).inner_html()
        for component in ("compute", "storage", "platform ops", "engineer labour"):
            assert f">{component}<" in legend
        browser.close()
    assert errors == []
    assert all(u.startswith(("file:", "data:", "about:")) for u in requests), requests
