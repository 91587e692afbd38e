"""The demo's HTML report in a real headless Chromium: offline, every section, charts drawn."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from .conftest import run_cli

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def demo_ws(demo_workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the session's demo workspace, with the report `gpudecide demo` wrote."""
    root = tmp_path_factory.mktemp("demo") / "ws"
    shutil.copytree(demo_workspace, root, symlinks=True)
    assert (root / "report" / "index.html").is_file()
    return root


def _browser() -> Any:
    if not os.path.exists(CHROMIUM):
        if os.environ.get("GPUDECIDE_REQUIRE_BROWSER") == "1":
            pytest.fail("GPUDECIDE_REQUIRE_BROWSER=1 but Chromium is not installed")
        pytest.skip("Chromium not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    return sync_playwright()


ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.mark.browser
def test_report_renders_offline_with_every_section(demo_ws: Path) -> None:
    html = demo_ws / "report" / "index.html"
    requests: list[str] = []
    errors: list[str] = []
    with _browser() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(html.as_uri())
        assert page.title().startswith("GPU decision report")
        kinds = page.locator("section[data-kind]")
        shown = [kinds.nth(i).get_attribute("data-kind") for i in range(kinds.count())]
        # The decision opens the report; then every analysis in the registry's order.
        assert shown[0] == "decision"
        measured = ["profile", "queue", "replay", "cost", "audit"]
        assert [k for k in shown if k in measured] == measured
        assert set(shown) >= {
            "export_test",
            "drill",
            "cordon",
            "raci",
            "isolation",
            "residency",
            "hybrid",
        }
        assert shown.count("export_test") == 2  # one per option tested
        assert page.locator("td.status-fresh").count() == len(shown)
        profile = page.locator("section[data-kind=profile]")
        assert "47 GPU jobs in all" in profile.inner_text()
        expected = {
            "profile": ["Jobs per week, by kind", "GPU-hours per day", "GPUs in use over time"],
            "queue": [
                "Queue waits against the SLO thresholds",
                "Median phase durations by job kind",
                "Chains: waiting (light) and running (dark)",
            ],
            "replay": ["p95 wait and utilisation against pool size"],
        }
        for kind, titles in expected.items():
            charts = page.locator(f"section[data-kind={kind}] svg[role=img]")
            labels = [charts.nth(i).get_attribute("aria-label") for i in range(charts.count())]
            assert labels == titles, kind
            for i in range(charts.count()):
                box = charts.nth(i).bounding_box()
                assert box is not None and box["width"] > 300 and box["height"] > 100
        assert page.locator("section[data-kind=cost] svg[role=img]").count() == 3
        legend = page.locator("section[data-kind=profile] svg[role=img]").nth(0).inner_html()
        for kind in ("train", "smoke", "restart", "eval", "merge", "quantize", "export"):
            assert f">{kind}<" in legend
        # The hazards are in the audit's folded details: in the page, not on the screen.
        audit = page.locator("section[data-kind=audit]").text_content() or ""
        assert "unknown_format" in audit and "adapter_base_revision_missing" in audit
        assert len(page.screenshot(full_page=True)) > 200_000
        browser.close()
    assert errors == []
    assert all(u.startswith(("file:", "data:", "about:")) for u in requests), requests


@pytest.mark.browser
def test_report_in_russian_and_kazakh(demo_ws: Path) -> None:
    cfg = demo_ws / "gpudecide.yaml"
    original = cfg.read_text()
    try:
        for lang, heading in (("ru", "Профиль нагрузки"), ("kk", "Жүктеме профилі")):
            cfg.write_text(original.replace("language: en", f"language: {lang}"))
            assert run_cli("report", "--workspace", str(demo_ws)).returncode == 0
            with _browser() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = browser.new_page()
                page.goto((demo_ws / "report" / "index.html").as_uri())
                assert page.locator("html").get_attribute("lang") == lang
                assert heading in page.locator("section[data-kind=profile] h2").inner_text()
                browser.close()
    finally:
        cfg.write_text(original)


@pytest.mark.browser
@pytest.mark.parametrize(("lang", "decision_title"), [("ru", "Решение"), ("kk", "Шешім")])
def test_decision_opens_the_report_in_russian_and_kazakh(
    demo_ws: Path, tmp_path: Path, lang: str, decision_title: str
) -> None:
    cfg = demo_ws / "gpudecide.yaml"
    original = cfg.read_text()
    out = tmp_path / f"report-{lang}"
    try:
        cfg.write_text(original.replace("language: en", f"language: {lang}"))
        assert run_cli("report", "--workspace", str(demo_ws), "--out", str(out)).returncode == 0
    finally:
        cfg.write_text(original)
    requests: list[str] = []
    with _browser() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("request", lambda r: requests.append(r.url))
        page.goto((out / "index.html").as_uri())
        decision = page.locator("section[data-kind=decision]")
        assert decision_title in decision.locator("h2").inner_text()
        assert "kz-local" in decision.inner_text() and "managed-ft" in decision.inner_text()
        decision.scroll_into_view_if_needed()
        assert decision.is_visible()
        shot = decision.screenshot()
        assert len(shot) > 20_000  # the decision section really drew (tables and a chart)
        (out / f"decision-{lang}.png").write_bytes(shot)
        browser.close()
    assert all(u.startswith(("file:", "data:", "about:")) for u in requests), requests


@pytest.mark.browser
@pytest.mark.parametrize(
    ("lang", "status", "label"),
    [
        ("en", "provisional", "leading option"),
        ("ru", "предварительно", "вариант впереди"),
        ("kk", "алдын ала", "алдағы нұсқа"),
    ],
)
def test_the_first_screen_holds_the_status_and_the_option(
    demo_ws: Path, tmp_path: Path, lang: str, status: str, label: str
) -> None:
    """At 1440x900 the committee sees the decision's status and the option it concerns
    without scrolling (issue 22); at 1024 px wide nothing scrolls sideways."""
    out = tmp_path / f"report-{lang}"
    run = run_cli("--lang", lang, "report", "--workspace", str(demo_ws), "--out", str(out))
    assert run.returncode == 0, run.stderr
    with _browser() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto((out / "index.html").as_uri())
        badge = page.locator("#overview .status-badge")
        option = page.locator("#overview .answer .leader")
        assert badge.inner_text() == status and option.inner_text() == "kz-local"
        assert label in page.locator("#overview .answer").inner_text()
        for element in (badge, option):
            box = element.bounding_box()
            assert box is not None and box["y"] + box["height"] <= 900, box
        page.set_viewport_size({"width": 1024, "height": 900})
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= 1024, f"{wide} px wide at a 1024 px viewport"
        browser.close()
