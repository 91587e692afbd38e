"""`--help` speaks the reader's language: every help text of every command has its Russian
and Kazakh translation in the `cli` catalogue, and the real console script prints them for
`--lang`, $GPUDECIDE_LANG and the workspace's report.language, with English unchanged."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
import typer
import typer.rich_utils as rich_utils

from gpudecide.cli import app
from gpudecide.console import argv_language
from gpudecide.help_text import commands, help_texts, localize_help, shows_help
from gpudecide.i18n import catalogue
from tests.conftest import run_cli
from tests.english import english_lines, english_runs

TRANSLATED = ("ru", "kk")


def _fields(text: str) -> list[str]:
    """The `{fields}` of a text, `{}` as ""."""
    return sorted(n for _lit, n, _spec, _conv in string.Formatter().parse(text) if n is not None)


def _tree() -> typer.core.TyperGroup:
    root = typer.main.get_command(app)
    assert isinstance(root, typer.core.TyperGroup)
    return root


def test_the_tree_has_every_command_and_its_help() -> None:
    names = {c.name for c in commands(_tree())}
    # The groups and the commands under them are all walked.
    assert {"gpudecide", "queue", "cost", "check", "raci", "isolation", "residency"} <= names
    texts = help_texts(_tree())
    assert "Print one JSON object for machines." in texts
    assert len(texts) >= 100


def _lacking(root: typer.core.TyperGroup, lang: str) -> list[str]:
    """Help texts of the tree that the `lang` catalogue lacks, or translates with other
    fields or with English words left in."""
    have = catalogue("cli", lang)
    quoted = _verbatim()
    return sorted(
        text
        for text in help_texts(root)
        if text not in have
        or _fields(text) != _fields(have[text])
        or english_runs(have[text], quoted)
    )


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_help_text_is_translated(lang: str) -> None:
    lacking = _lacking(_tree(), lang)
    assert not lacking, f"cli/{lang}: {len(lacking)} lacking or wrong: {lacking[:5]}"


def test_a_help_text_without_translation_is_found() -> None:
    """Negative case: a new option's help that the catalogue lacks is listed."""
    root = _tree()
    root.params[0].help = "A brand-new option nobody translated."  # type: ignore[attr-defined]
    assert _lacking(root, "ru") == ["A brand-new option nobody translated."]


def test_localize_puts_translations_in_place_and_english_back() -> None:
    root = _tree()
    queue = root.commands["queue"]
    english = queue.help
    assert english is not None
    try:
        localize_help(root, "ru")
        assert queue.help == catalogue("cli", "ru")[english]
        assert rich_utils.OPTIONS_PANEL_TITLE == "Параметры"
        json_opt = next(p for p in queue.params if p.name == "as_json")
        assert json_opt.help == catalogue("cli", "ru")["Print one JSON object for machines."]  # type: ignore[attr-defined]
        help_option = queue.get_help_option(typer.Context(queue))
        assert help_option is not None
        assert help_option.help == catalogue("cli", "ru")["Show this message and exit."]
        assert queue.get_usage(typer.Context(queue, info_name="queue")).startswith(
            "Использование: queue"
        )
    finally:
        localize_help(_tree(), "en")
    # English puts typer's own words back (a run in English after one in Russian).
    assert rich_utils.OPTIONS_PANEL_TITLE == "Options"
    assert rich_utils.DEFAULT_STRING == "[default: {}]"


@pytest.mark.parametrize(
    ("argv", "env", "want"),
    [
        (["--lang", "ru", "queue", "--help"], {}, "ru"),
        (["--lang=kk", "--help"], {}, "kk"),
        (["--lang", "KK", "--help"], {"GPUDECIDE_LANG": "ru"}, "kk"),  # the option wins
        (["queue", "--help"], {"GPUDECIDE_LANG": "ru"}, "ru"),
        (["queue", "--help"], {}, "en"),
        (["--lang", "xx", "--help"], {}, "en"),  # refused by the root option, not here
        (["queue", "--", "--lang", "ru"], {}, "en"),  # after "--" it is an argument
        (["--lang"], {}, "en"),  # no value: click reports it
    ],
)
def test_argv_language_is_read_before_click_parses(
    argv: list[str],
    env: dict[str, str],
    want: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.delenv("GPUDECIDE_LANG", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)  # no workspace from here up
    assert argv_language(argv) == want


@pytest.mark.parametrize(
    ("args", "shows"),
    [
        ([], True),
        (["--lang", "ru"], True),
        (["check"], True),
        (["check", "residency"], False),
        (["check", "residency", "--help"], True),
        (["queue", "logs/x.txt", "--json"], False),
    ],
)
def test_help_pages_are_known_before_parsing(args: list[str], shows: bool) -> None:
    # Only a run that can print a help page looks for its language (which may read the
    # workspace): `check` alone prints the group's help.
    assert shows_help(_tree(), args) is shows


# The words a help page shows verbatim in every language: command names (first column of
# the command panel) and literal values the options take.
def _verbatim() -> list[str]:
    words = [c.name for c in commands(_tree()) if c.name]
    # Argument names in the usage line ("[logs]...") and the program as run_cli starts it
    # ("python -m gpudecide").
    words += [p.name for c in commands(_tree()) for p in c.params if p.name]
    words.append("python")
    for text in help_texts(_tree()):
        words += re.findall(r"`([^`]+)`", text)
        for listing in re.findall(r"\w[\w.-]*(?:\s*[|/]\s*\w[\w.-]*)+", text):
            words += [w.strip() for w in re.split(r"[|/]", listing)]
    return words


# The root, a log command, the groups and a command inside one (each run is a process).
PAGES = [[], ["queue"], ["cost"], ["export-test"], ["check"], ["check", "residency"]]


@pytest.mark.parametrize("lang", TRANSLATED)
@pytest.mark.parametrize("page", PAGES, ids=lambda p: " ".join(p) or "root")
def test_help_pages_speak_the_language(lang: str, page: list[str], tmp_path: Path) -> None:
    result = run_cli("--lang", lang, *page, "--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    usage = {"ru": "Использование:", "kk": "Қолданылуы:"}[lang]
    options = {"ru": "Параметры", "kk": "Параметрлер"}[lang]
    assert usage in result.stdout and options in result.stdout
    assert "Usage:" not in result.stdout and " Options " not in result.stdout
    assert english_lines(result.stdout, None, _verbatim()) == []


def test_help_follows_the_environment_and_the_workspace(tmp_path: Path) -> None:
    env = run_cli("cost", "--help", cwd=tmp_path, env={"GPUDECIDE_LANG": "kk"})
    assert env.returncode == 0 and "Қолданылуы:" in env.stdout
    assert catalogue("cli", "kk")["Print one JSON object for machines."][:20] in env.stdout
    ws = tmp_path / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    config = ws / "gpudecide.yaml"
    config.write_text(config.read_text().replace("language: en", "language: ru"))
    inside = run_cli("queue", "--help", cwd=ws)
    assert inside.returncode == 0 and "Использование:" in inside.stdout
    # A broken workspace does not break help: English, and the command reports the rest.
    config.write_text("report: [\n")
    broken = run_cli("queue", "--help", cwd=ws)
    assert broken.returncode == 0 and "Usage:" in broken.stdout


def test_english_help_is_unchanged(tmp_path: Path) -> None:
    result = run_cli("queue", "--help", cwd=tmp_path)
    assert result.returncode == 0
    out = result.stdout
    assert re.search(r"Usage: .*gpudecide queue \[OPTIONS\]", out)
    assert "Print one JSON object for machines." in out
    assert "Show this message and exit." in out and "Options" in out
