"""The HTML report in a real headless Chromium: renders offline, charts drawn, no requests out."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gpudecide import demo
from gpudecide.cli import LogArgs, build_report, load_for_command, run_profile

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def report_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = demo.create(tmp_path_factory.mktemp("demo"))
    run_profile(load_for_command(LogArgs([]), ws, None))
    return build_report(ws)["html"]


@pytest.mark.browser
def test_report_renders_offline_with_charts(report_html: Path) -> None:
    if not os.path.exists(CHROMIUM):
        if os.environ.get("GPUDECIDE_REQUIRE_BROWSER") == "1":
            pytest.fail("GPUDECIDE_REQUIRE_BROWSER=1 but Chromium is not installed")
        pytest.skip("Chromium not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page()
        page.on("request", lambda r: requests.append(r.url))
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(report_html.as_uri())
        assert page.title().startswith("GPU decision report")
        section = page.locator("section[data-kind=profile]")
        assert "47 GPU jobs in all" in section.inner_text()
        charts = section.locator("svg[role=img]")
        labels = [charts.nth(i).get_attribute("aria-label") for i in range(charts.count())]
        assert labels == ["Jobs per week, by kind", "GPU-hours per day", "GPUs in use over time"]
        for i in range(charts.count()):
            box = charts.nth(i).bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 120
        # the stacked bars really are there: one legend entry per kind that occurs
        legend = charts.nth(0).inner_html()
        for kind in ("train", "smoke", "restart", "eval", "merge", "quantize", "export"):
            assert f">{kind}<" in legend
        status = page.locator("td.status-fresh")
        assert status.count() == 1
        png = page.screenshot(full_page=True)
        assert len(png) > 50_000
        browser.close()
    assert errors == []
    assert all(u.startswith(("file:", "data:", "about:")) for u in requests), requests
