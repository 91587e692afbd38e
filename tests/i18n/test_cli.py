"""The root commands (init, report, evidence, the --lang option) speak the reader's language
(issue 10): `--lang`, else $GPUDECIDE_LANG, else the workspace's report.language, else English;
--json output is the same in every language."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gpudecide.sections import SECTIONS
from tests.conftest import run_cli
from tests.english import english_lines

# Evidence kinds are identifiers (the `kind` of a record, as `--json` and the files name them).
_KINDS = frozenset({*SECTIONS, "decision"})


def _english(output: str, root: Path) -> list[tuple[str, list[str]]]:
    return [
        (line, runs)
        for line, runs in english_lines(output, root)
        if any(w not in _KINDS for w in runs)
    ]


@pytest.mark.parametrize(
    ("lang", "created", "fresh", "html"),
    [
        ("ru", "рабочая папка создана", "актуально", "отчёт HTML"),
        ("kk", "жұмыс қалтасы құрылды", "өзекті", "HTML есебі"),
    ],
)
def test_root_commands_speak_the_language(
    demo_copy: Path, tmp_path: Path, lang: str, created: str, fresh: str, html: str
) -> None:
    """init, evidence and report in ru/kk: no English prose, the language's own words."""
    new = run_cli("--lang", lang, "init", str(tmp_path / "new"))
    assert new.returncode == 0, new.stderr
    assert created in new.stdout and not _english(new.stdout, demo_copy)

    listed = run_cli("--lang", lang, "evidence", cwd=demo_copy)
    assert listed.returncode == 0, listed.stderr
    assert fresh in listed.stdout and not _english(listed.stdout, demo_copy)

    written = run_cli("--lang", lang, "report", cwd=demo_copy)
    assert written.returncode == 0, written.stderr
    assert f"{html}: {demo_copy / 'report' / 'index.html'}" in written.stdout
    assert not _english(written.stdout, demo_copy)
    # The report itself is in the run's language, whatever gpudecide.yaml says (en).
    page = (demo_copy / "report" / "index.html").read_text(encoding="utf-8")
    assert f'<html lang="{lang}">' in page
    assert "language: en" in (demo_copy / "gpudecide.yaml").read_text(encoding="utf-8")


def test_stale_records_are_explained_in_the_language(demo_copy: Path) -> None:
    """A changed input: `evidence` exits 1 and says why in Russian, the path as it is."""
    slo = demo_copy / "slo.yaml"
    slo.write_text(slo.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    listed = run_cli("--lang", "ru", "evidence", cwd=demo_copy)
    assert listed.returncode == 1
    assert "устарела" in listed.stdout
    assert "slo.yaml" in listed.stdout and "изменился" in listed.stdout
    assert not _english(listed.stdout, demo_copy)


def test_language_comes_from_env_then_workspace(demo_copy: Path) -> None:
    """$GPUDECIDE_LANG without --lang; the workspace's report.language without either;
    --lang over both; English by default."""
    env_run = run_cli("report", cwd=demo_copy, env={"GPUDECIDE_LANG": "kk"})
    assert "HTML есебі:" in env_run.stdout
    config = demo_copy / "gpudecide.yaml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("language: en", "language: ru"), encoding="utf-8")
    assert "language: ru" in config.read_text(encoding="utf-8")
    ws_run = run_cli("report", cwd=demo_copy)
    assert "отчёт HTML:" in ws_run.stdout
    flag_run = run_cli("--lang", "en", "report", cwd=demo_copy, env={"GPUDECIDE_LANG": "kk"})
    assert flag_run.stdout.startswith("html: ")
    config.write_text(text, encoding="utf-8")
    assert run_cli("report", cwd=demo_copy).stdout.startswith("html: ")


def test_json_is_the_same_in_every_language(demo_copy: Path) -> None:
    """Machines read ids: --json output does not change with the language."""
    outputs = {
        lang: json.loads(run_cli("--lang", lang, "evidence", "--json", cwd=demo_copy).stdout)
        for lang in ("en", "ru", "kk")
    }
    assert outputs["en"] == outputs["ru"] == outputs["kk"]
    assert outputs["en"]["all_fresh"] is True


@pytest.mark.parametrize("how", ["flag", "env"])
def test_an_unknown_language_is_one_line_exit_2(demo_copy: Path, how: str) -> None:
    """`--lang de` or GPUDECIDE_LANG=de: one line naming the option, exit 2, nothing written."""
    before = sorted(p.name for p in (demo_copy / "report").iterdir())
    args = ("--lang", "de", "report") if how == "flag" else ("report",)
    env = {"GPUDECIDE_LANG": "de"} if how == "env" else {}
    result = run_cli(*args, cwd=demo_copy, env=env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--lang" in lines[0] and "'de'" in lines[0], result.stderr
    assert "en, ru, kk" in lines[0]
    assert sorted(p.name for p in (demo_copy / "report").iterdir()) == before
    assert "Traceback" not in result.stderr and os.environ.get("GPUDECIDE_LANG") is None
