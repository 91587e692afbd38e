"""The analyses' commands speak Russian and Kazakh (issue 10): profile, columns, queue, replay,
cost, audit, hash and manifest.

Each command runs as a person runs it (the console script, on a copy of the demo workspace)
with `--lang ru` and `--lang kk`: the exit code is the English one, no line holds English
prose (`tests/english.py`; ids, paths and the team's own words are not prose), and a phrase
of the language is there. The language comes from `--lang`, else $GPUDECIDE_LANG, else the
workspace's `report.language`; `--json` output is the same in every language.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.english import english_lines

# A phrase each command prints in each language (from its catalogue), and the exit code the
# English run of the same command on the demo workspace has (tests of each command check it).
PHRASES = {
    "profile": {"ru": "успешных полных обучений: 3", "kk": "сәтті толық оқытулар: 3"},
    "columns": {"ru": "Идентификатор задания в планировщике", "kk": "тапсырма идентификаторы"},
    "queue": {"ru": "вытеснение: остановок 1", "kk": "ығыстыру: тоқтаулар 1"},
    "replay": {"ru": "прогнано заданий: 47", "kk": "қайта ойнатылған тапсырмалар: 47"},
    "cost": {"ru": "безубыточность owned-8xh100", "kk": "шығынсыздығы: пайдалы жүктеме"},
    "audit": {"ru": "РИСК unknown_format", "kk": "ҚАУІП unknown_format"},
}


def _speaks(result: subprocess.CompletedProcess[str], root: Path, phrase: str, rc: int) -> str:
    """The command's output, once its exit code, language and phrase are checked."""
    out = result.stdout + result.stderr
    assert result.returncode == rc, out
    assert english_lines(out, root) == [], out
    assert phrase in out, out
    return out


def _kz_local_export(root: Path) -> Path:
    """The passing export test's run folder (checkpoint, manifest) in the demo workspace."""
    return next((root / "exports" / "export-test").glob("kz-local-*"))


@pytest.mark.parametrize("lang", ["ru", "kk"])
def test_log_commands_speak_the_language(demo_copy: Path, lang: str) -> None:
    """profile, columns, queue and replay: every line in ru / kk, exit codes as in English."""
    root = demo_copy
    for command in ("profile", "columns", "queue", "replay"):
        result = run_cli("--lang", lang, command, cwd=root)
        out = _speaks(result, root, PHRASES[command][lang], 0)
        if command in ("profile", "queue", "replay"):
            # Where the record went, in the language; the path itself as written.
            word = "доказательство: " if lang == "ru" else "дәлел: "
            assert f"{word}{root / 'evidence'}" in out


@pytest.mark.parametrize("lang", ["ru", "kk"])
def test_cost_and_audit_speak_the_language(demo_copy: Path, lang: str) -> None:
    """cost (exit 0) and the vendor export's audit (a hazard: exit 1) in ru / kk."""
    root = demo_copy
    out = _speaks(run_cli("--lang", lang, "cost", cwd=root), root, PHRASES["cost"][lang], 0)
    assert "1\u00a0290\u00a0966" in out  # the locale's group sign (English: 1,290,966)
    audit = run_cli(
        "--lang", lang, "audit", "exports/vendor-run-7", "--option", "managed-ft", cwd=root
    )
    out = _speaks(audit, root, PHRASES["audit"][lang], 1)
    layer = {"ru": "обучение", "kk": "оқыту"}[lang]  # the E2 layer "training"
    assert layer in out


@pytest.mark.parametrize("lang", ["ru", "kk"])
def test_hash_and_manifest_speak_the_language(
    demo_workspace: Path, tmp_path: Path, lang: str
) -> None:
    """hash (and --verify, --out) and manifest create / lint / verify / provenance."""
    root = demo_workspace  # read only: every file these commands write goes to tmp_path
    run = _kz_local_export(root)
    ckpt = run / "checkpoint-4"
    words = {
        "ru": ("совпало 7, не совпало 0", "байт", "предупреждений: 2", "проверено", "утверждение"),
        "kk": ("сәйкес келді 7, сәйкес емес 0", "байт", "ескертулер: 2", "тексерілді", "мәлімдеме"),
    }[lang]
    sums_file = str(ckpt / "SHA256SUMS")
    sums = run_cli("--lang", lang, "hash", str(ckpt), "--verify", sums_file, cwd=root)
    _speaks(sums, root, words[0], 0)
    out_file = tmp_path / "sums.txt"
    _speaks(run_cli("--lang", lang, "hash", str(ckpt), "--out", str(out_file), cwd=root), root,
            words[1], 0)  # fmt: skip
    assert "  model.safetensors\n" in out_file.read_text()  # the sums are never translated
    manifest = run / "run-manifest.json"
    _speaks(run_cli("--lang", lang, "manifest", "lint", str(manifest), cwd=root), root, words[2], 0)
    verify = run_cli("--lang", lang, "manifest", "verify", str(run), str(manifest), cwd=root)
    _speaks(verify, root, words[3], 0)
    statement = tmp_path / "statement.json"
    prov = run_cli(
        "--lang", lang, "manifest", "provenance", str(manifest), "--out", str(statement), cwd=root
    )
    _speaks(prov, root, words[4], 0)
    # (a name of no English words: the prose detector splits a path at the team's own words)
    target = tmp_path / "mf7.json"
    created = run_cli(
        "--lang", lang, "manifest", "create", str(root / "exports" / "vendor-run-7"),
        "--out", str(target), cwd=root,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    # The next command to type is shown as it is typed; everything else is in the language.
    rest = created.stdout.replace(f"gpudecide manifest lint {target}", "")
    assert english_lines(rest, root) == [], created.stdout
    assert {"ru": "состояние оптимизатора: нет", "kk": "оптимизатор күйі: жоқ"}[lang] in rest


def test_a_mismatch_is_named_in_the_language(demo_workspace: Path) -> None:
    """Negative case: hash --verify against another folder's sums fails (exit 1) in Russian."""
    root = demo_workspace
    ckpt = _kz_local_export(root) / "checkpoint-4"
    other = root / "exports" / "vendor-run-7"
    result = run_cli("--lang", "ru", "hash", str(other), "--verify", str(ckpt / "SHA256SUMS"))
    assert result.returncode == 1
    assert "trainer_state.json: НЕ СОВПАДАЕТ" in result.stdout
    assert "vendor_state.vpk: НЕТ В СПИСКЕ" in result.stdout
    assert "совпало 0, не совпало 1, отсутствует 6, нет в списке 4" in result.stdout


def test_language_comes_from_the_environment_then_the_workspace(demo_copy: Path) -> None:
    """--lang, else $GPUDECIDE_LANG, else report.language; --json is the same in every one."""
    root = demo_copy
    config = root / "gpudecide.yaml"
    text = config.read_text(encoding="utf-8")
    assert "\n  language: en\n" in text
    config.write_text(text.replace("\n  language: en\n", "\n  language: ru\n"), encoding="utf-8")
    # Neither --lang nor the variable: the workspace's Russian.
    workspace_ru = run_cli("replay", cwd=root)
    assert workspace_ru.returncode == 0, workspace_ru.stderr
    assert PHRASES["replay"]["ru"] in workspace_ru.stdout
    assert english_lines(workspace_ru.stdout, root) == []
    # The variable beats the workspace; --lang beats the variable.
    env_kk = run_cli("replay", cwd=root, env={"GPUDECIDE_LANG": "kk"})
    assert PHRASES["replay"]["kk"] in env_kk.stdout, env_kk.stdout
    english = run_cli("--lang", "en", "replay", cwd=root, env={"GPUDECIDE_LANG": "kk"})
    assert "47 jobs replayed (full window, fifo)" in english.stdout
    assert "GPUs  jobs  p50" in english.stdout
    # Machines read the same JSON whatever the language.
    outputs = {lang: run_cli("--lang", lang, "profile", "--json", cwd=root) for lang in
               ("en", "ru", "kk")}  # fmt: skip
    assert all(r.returncode == 0 for r in outputs.values())
    assert outputs["en"].stdout == outputs["ru"].stdout == outputs["kk"].stdout
    cost = {lang: run_cli("--lang", lang, "cost", "--json", cwd=root).stdout for lang in
            ("en", "kk")}  # fmt: skip
    assert cost["en"] == cost["kk"] and '"summary": "cheapest normal month' in cost["en"]


def test_skipped_rows_are_named_in_the_language(demo_workspace: Path, tmp_path: Path) -> None:
    """A malformed row (--skip-bad-rows) is counted and explained in Kazakh; the log's
    column names stay as the log writes them."""
    root = demo_workspace
    log = tmp_path / "sacct.txt"
    log.write_text((root / "logs" / "sacct-8w.txt").read_text() + "garbage|row|x\n")
    result = run_cli(
        "--lang", "kk", "profile", str(log), "--skip-bad-rows",
        "--evidence-dir", str(tmp_path / "evidence"), cwd=root,
    )  # fmt: skip
    out = _speaks(result, root, "өткізілген бүлінген жолдар: 18:", 0)
    assert "`User` өрістер тақырыптағы 21 санынан аз" in out


def test_audit_egress_line_in_the_language(tmp_path: Path) -> None:
    """The measured egress and migration window (E5, V1) of `audit --source`, in ru / kk;
    an absent throughput is "n/a" in the language, never Python's None."""
    from gpudecide.artifacts.cli import _lines
    from gpudecide.artifacts.figures import EgressWindow
    from gpudecide.i18n import speaking

    egress = {
        "throughput_mb_s": 12.5,
        "bytes": 1048576,
        "run_bytes": 52_428_800_000,
        "extrapolated_from": "export size (no run_size_gb in the plan)",
        "migration_window_hours": 1.165,
    }

    def lines(lang: str, **change: object) -> list[str]:
        window = EgressWindow.model_validate({**egress, **change})
        with speaking(lang):  # type: ignore[arg-type]
            return _lines([], [], window, [])

    assert lines("en") == [
        "egress: 12.5 MB/s over 1,048,576 bytes; moving 52,428,800,000 bytes (export size (no "
        "run_size_gb in the plan)) takes 1.165 h"
    ]
    (ru,) = lines("ru")
    assert ru.startswith("выгрузка: 12,5 МБ/с на 1\u00a0048\u00a0576 байт")
    assert "(размер экспорта (в плане нет run_size_gb)) займёт 1,165 ч" in ru
    (kk,) = lines("kk", throughput_mb_s=None)
    assert kk.startswith("шығару: 1\u00a0048\u00a0576 байтта ж/ж МБ/с")
    assert english_lines(f"{ru}\n{kk}", tmp_path) == []


def test_manifest_lint_errors_in_the_language(demo_workspace: Path, tmp_path: Path) -> None:
    """Negative case: a manifest naming a tag instead of a digest, a short commit and a date
    without a time fails the lint (exit 1); each finding, severity and rule word in Russian."""
    import json

    root = demo_workspace
    manifest = json.loads((_kz_local_export(root) / "run-manifest.json").read_text())
    manifest.update(base_model="meta/llama:v1", code_commit="abc12", created_at_utc="2026-01-01")
    path = tmp_path / "m.json"
    path.write_text(json.dumps(manifest, indent=1))
    result = run_cli("--lang", "ru", "manifest", "lint", str(path), cwd=root)
    out = _speaks(result, root, "ошибок: 3, предупреждений: 2", 1)
    assert "ошибка: code_commit: 'abc12' слишком короткий, чтобы назвать коммит [A6 коммит]" in out
    assert "у 'meta/llama:v1' тег вместо дайджеста: закрепите как name@sha256:" in out
    assert "ошибка: created_at_utc: в '2026-01-01' нет времени суток [A6 время]" in out
