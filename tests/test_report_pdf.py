"""The report as a PDF for the archive (issue 22): made offline with WeasyPrint, fonts
embedded, pages that render (pdftoppm), and text that keeps the decision and the Kazakh
letters intact (pdftotext)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import run_cli

KAZAKH = set("әғқңөұүһіӘҒҚҢӨҰҮҺІ")


def _poppler(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        if os.environ.get("GPUDECIDE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{tool} is missing (apt-get install poppler-utils)")
        pytest.skip(f"{tool} is missing (apt-get install poppler-utils)")
    return found


@pytest.fixture(scope="module")
def kk_pdf(demo_workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pdf") / "ws"
    shutil.copytree(demo_workspace, root, symlinks=True)
    out = root / "report-kk"
    run = run_cli("--lang", "kk", "report", "--pdf", "--workspace", str(root), "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert (out / "index.html").is_file()
    return out / "report.pdf"


def test_the_pdf_holds_the_decision_and_every_kazakh_letter(kk_pdf: Path, tmp_path: Path) -> None:
    text = subprocess.run(
        [_poppler("pdftotext"), "-layout", str(kk_pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    first = text.split("\f")[0] + text.split("\f")[1]
    assert "алдын ала" in first and "kz-local" in first  # status and the leading option
    html = (kk_pdf.parent / "index.html").read_text(encoding="utf-8")
    visible = re.sub(r"<[^>]+>", " ", html)
    letters = KAZAKH & set(visible)
    assert len(letters) >= 8, letters  # the report really speaks Kazakh
    assert letters <= set(text), f"lost in the PDF: {sorted(letters - set(text))}"


def test_the_pdf_embeds_its_fonts_and_its_pages_render(kk_pdf: Path, tmp_path: Path) -> None:
    fonts = subprocess.run(
        [_poppler("pdffonts"), str(kk_pdf)], capture_output=True, text=True, check=True
    ).stdout.splitlines()[2:]
    assert fonts and all(" yes yes " in line for line in fonts), fonts
    subprocess.run(
        [
            _poppler("pdftoppm"),
            "-r",
            "50",
            "-f",
            "1",
            "-l",
            "2",
            "-png",
            str(kk_pdf),
            str(tmp_path / "page"),
        ],
        check=True,
    )
    pages = sorted(tmp_path.glob("page-*.png"))
    assert len(pages) == 2 and all(p.stat().st_size > 5_000 for p in pages)


def test_without_weasyprint_the_pdf_is_one_line_exit_2(
    tmp_path: Path, demo_workspace: Path
) -> None:
    """A machine without WeasyPrint's libraries: one line that says what to install."""
    root = tmp_path / "ws"
    shutil.copytree(demo_workspace, root, symlinks=True)
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "weasyprint.py").write_text("raise OSError('cannot load library libpango')\n")
    run = run_cli("report", "--pdf", "--workspace", str(root), env={"PYTHONPATH": str(blocker)})
    assert run.returncode == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "libpango" in run.stderr
    assert "Traceback" not in run.stderr
    assert not (root / "report" / "report.pdf").exists()
