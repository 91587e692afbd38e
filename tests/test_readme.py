"""The README's first two commands, as a new user runs them: from a clean clone."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert block is not None
    return [ln.split("#", 1)[0].strip() for ln in block.group(1).splitlines() if ln.strip()]


def test_readme_starts_with_the_two_commands() -> None:
    assert readme_commands() == ["scripts/demo", "scripts/test"]
    assert (ROOT / ".ci" / "run").read_text().rstrip().endswith("exec scripts/test")


@pytest.mark.slow
def test_demo_command_from_a_clean_clone(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    res = subprocess.run(
        ["bash", "-c", readme_commands()[0]],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert (clone / ".venv" / "bin" / "gpudecide").exists()  # its own fresh venv
    report = clone / "gpudecide-demo" / "report"
    html = (report / "index.html").read_text()
    assert "47 GPU jobs in all" in html and "<svg" in html
    body = json.loads((report / "report.json").read_text())
    assert body["sections"][0]["kind"] == "decision"  # the report opens with the answer
    profile = next(s for s in body["sections"] if s["kind"] == "profile")["evidence"]["figures"]
    assert profile["jobs_total"] == 47 and profile["trainings_successful"] == 3
    assert (report / "report.md").read_text().startswith("# GPU decision report")
