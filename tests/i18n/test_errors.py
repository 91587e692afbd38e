"""One-line errors in the reader's language: every message and hint written as a literal or
f-string at an `InputError(...)` has its Russian and Kazakh pattern in the `errors`
catalogue, and the real console script prints them for `--lang`, with file, line and quoted
values as written and the `--json` error unchanged."""

from __future__ import annotations

import ast
import json
import re
import string
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

import gpudecide
from gpudecide.console import CLICK_MESSAGES, error_line
from gpudecide.errors import InputError
from gpudecide.i18n import catalogue, speaking
from gpudecide.inputs import PYDANTIC_MESSAGES
from tests.conftest import SACCT, run_cli
from tests.english import english_runs

SRC = Path(gpudecide.__file__).parent
TRANSLATED = ("ru", "kk")
# The words the error line adds around the parts: the prefix and the field.
FRAME = ("error", "field {field}", "see `{command} --help`", "interrupted")


def _constants(tree: ast.Module) -> dict[str, str]:
    """A module's top-level string constants (`_TIME_HINT = " (...)"`), to inline them."""
    out: dict[str, str] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            out[node.targets[0].id] = node.value.value
    return out


def _template(node: ast.expr, constants: dict[str, str] | None = None) -> str | None:
    """The msgid of a message written in the code: a literal as is, an f-string with each
    `{expression}` named after it (`{exc.strerror}` -> `{strerror}`) and a module constant
    inlined; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        return None
    out: list[str] = []
    names: dict[str, str] = {}
    for value in node.values:
        if isinstance(value, ast.Constant):
            out.append(str(value.value).replace("{", "{{").replace("}", "}}"))
            continue
        assert isinstance(value, ast.FormattedValue)
        inner = value.value
        if isinstance(inner, ast.Name) and constants and inner.id in constants:
            out.append(constants[inner.id].replace("{", "{{").replace("}", "}}"))
            continue
        source = ast.unparse(inner)
        name = re.sub(r"\W+", "_", source.split("(")[0].split(".")[-1].split("[")[0]).strip("_")
        name = name if name and name[0].isalpha() else f"v_{name}"
        base, i = name, 2
        while names.get(name, source) != source:
            name, i = f"{base}{i}", i + 1
        names[name] = source
        out.append("{" + name + "}")
    return "".join(out)


# Where a message is written: the call and its argument positions / keywords. A ValueError
# raised in a model's validator reaches the line as pydantic's "Value error, {error}"; a bad
# row's reason (BadRow, tabular's _RowError) becomes the message of its error.
CALLS = {
    "InputError": (0, "hint"),
    "ValueError": (0,),
    "BadRow": (3, "reason"),
    "_RowError": (1, "reason"),
}
# Functions that return the reason a row or value is bad (the texts they return).
REASON_FUNCTIONS = re.compile(r"describe_bad|_time_reason|_crowded|\w+_problem")


def _call_texts(node: ast.Call) -> list[ast.expr]:
    func = node.func
    where = CALLS.get(str(getattr(func, "id", getattr(func, "attr", ""))), ())
    args = [node.args[i] for i in where if isinstance(i, int) and i < len(node.args)]
    return args + [k.value for k in node.keywords if k.arg in where]


def _returned_texts(func: ast.FunctionDef) -> list[ast.expr]:
    """The strings a reason function returns: directly, in a tuple, a dict's values, either
    branch of a conditional, a `.get` default."""
    out: list[ast.expr] = []
    todo = [n.value for n in ast.walk(func) if isinstance(n, ast.Return) and n.value]
    while todo:
        expr = todo.pop()
        if isinstance(expr, ast.Constant | ast.JoinedStr):
            out.append(expr)
        elif isinstance(expr, ast.Tuple):
            todo += expr.elts
        elif isinstance(expr, ast.Dict):
            todo += expr.values
        elif isinstance(expr, ast.IfExp):
            todo += [expr.body, expr.orelse]
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            todo += [expr.func.value, *expr.args[1:]]
    return out


def error_templates() -> dict[str, str]:
    """msgid -> where, for every message and hint written as a literal or an f-string where
    an error is made (CALLS, REASON_FUNCTIONS) in src/gpudecide, and pydantic's and click's
    wording."""
    found: dict[str, str] = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = _constants(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                exprs = _call_texts(node)
            elif isinstance(node, ast.FunctionDef) and REASON_FUNCTIONS.fullmatch(node.name):
                exprs = _returned_texts(node)
            else:
                continue
            for expr in exprs:
                text = _template(expr, constants)
                # Text made of fields alone ("{lower} {problem}") would match any sentence.
                # Text made of fields alone ("{lower} {problem}") would match any sentence; a
                # single word is a column name, not a message.
                bare = re.sub(r"\{\w*\}", "", text or "")
                if text and " " in text.strip() and re.search(r"[A-Za-z]{2}", bare):
                    found.setdefault(text, f"{path.relative_to(SRC)}:{node.lineno}")
    return (
        found
        | {m: "inputs.PYDANTIC_MESSAGES" for m in PYDANTIC_MESSAGES}
        | {m: "console.CLICK_MESSAGES" for m in CLICK_MESSAGES}
    )


TEMPLATES = error_templates()


def _fields(text: str) -> list[str]:
    return sorted(n for _l, n, _s, _c in string.Formatter().parse(text) if n is not None)


class _Sample(BaseModel):
    model_config = ConfigDict(extra="forbid")
    share: float = Field(default=0.5, gt=0, le=1)
    count: int = Field(default=1, ge=1, lt=5)
    flag: bool = True
    text: str = Field(default="ab", min_length=2)
    items: list[int] = []
    table: dict[str, int] = {}
    mode: Literal["x", "y"] = "x"
    needed: int

    @field_validator("text")
    @classmethod
    def _no_z(cls, value: str) -> str:
        if "z" in value:
            raise ValueError("no z here")
        return value


@pytest.mark.parametrize(
    "data",
    [
        {"share": "x"},
        {"share": None},
        {"share": 0},
        {"share": 2},
        {"count": "x"},
        {"count": 1.5},
        {"count": None},
        {"count": 0},
        {"count": 9},
        {"flag": "maybe"},
        {"flag": None},
        {"text": 1},
        {"text": "a"},
        {"text": "zz"},
        {"items": 1},
        {"table": 1},
        {"mode": "z"},
        {"needed": None, "extra": 1},
    ],
    ids=str,
)
def test_pydantic_messages_are_pydantic_wording(data: dict[str, object]) -> None:
    # Each message pydantic gives (the first error, as the YAML reader shows it) fits one of
    # the templates the errors catalogue translates.
    with pytest.raises(ValidationError) as exc:
        _Sample.model_validate({"needed": 1} | data)
    first = exc.value.errors()[0]
    if first["type"] == "extra_forbidden":
        return  # the YAML reader words this one itself ("unknown key ...")
    patterns = [re.escape(m).replace(r"\{", "{").replace(r"\}", "}") for m in PYDANTIC_MESSAGES]
    regexes = [re.sub(r"\{\w+\}", ".+", p) for p in patterns]
    assert any(re.fullmatch(r, first["msg"]) for r in regexes), first["msg"]


def test_a_pydantic_error_is_said_in_the_language() -> None:
    said = catalogue("errors", "ru")
    line = _say(
        InputError("Input should be less than or equal to {le}", path="slo.yaml", le=1), "ru"
    )
    assert line == f"{said['error']}: slo.yaml: " + said[
        "Input should be less than or equal to {le}"
    ].format(le="1")
    inner = _say(
        InputError(
            "start equals end, so the window is empty: leave "
            "time_of_day out to select every time of day"
        ),
        "ru",
    )
    assert english_runs(_prose(inner), ["time_of_day"]) == [], inner


def test_the_templates_are_found() -> None:
    assert len(TEMPLATES) >= 200
    assert "not inside a gpudecide workspace" in TEMPLATES  # a literal
    assert "cannot read: {strerror}" in TEMPLATES  # an f-string, named after its expression


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_error_template_is_translated(lang: str) -> None:
    have = catalogue("errors", lang)
    wanted = {**TEMPLATES, **{f: "console" for f in FRAME}}
    lacking = sorted(f"{where}: {m!r}" for m, where in wanted.items() if m not in have)
    assert not lacking, f"errors/{lang} lacks {len(lacking)}: " + "; ".join(lacking[:6])
    wrong = sorted(m for m in wanted if _fields(m) != _fields(have[m]))
    assert not wrong, f"errors/{lang}: fields differ in {wrong[:5]}"


def _prose(line: str) -> str:
    """The line without what it quotes: `commands`, 'values' (input, field names), option
    names: they stay as written in every language."""
    line = re.sub(r"`[^`]*`", " ", line)
    line = re.sub(r"'[^']*'", " ", line)
    return re.sub(r"(?<!\w)--[\w-]+", " ", line)


def _say(error: InputError, lang: str) -> str:
    return error_line(error, lang)  # type: ignore[arg-type]


def test_an_error_line_keeps_file_line_and_quoted_values() -> None:
    hint = "pass --workspace DIR, or create one with `gpudecide init DIR`"
    error = InputError("no such file", path="logs/jobs.txt", line=12, field="gpus", hint=hint)
    assert _say(error, "en") == f"error: logs/jobs.txt:12: field 'gpus': no such file ({hint})"
    ru = _say(error, "ru")
    said = catalogue("errors", "ru")
    field = said["field {field}"].format(field="'gpus'")
    assert ru == (
        f"{said['error']}: logs/jobs.txt:12: {field}: {said['no such file']} ({said[hint]})"
    )
    assert english_runs(_prose(ru), ["logs/jobs.txt"]) == []


def test_an_error_without_a_pattern_stays_english_around_the_frame() -> None:
    # A message no catalogue knows (a library's own words) is shown as written.
    line = _say(InputError("Expecting value: line 1 column 1"), "kk")
    assert line == catalogue("errors", "kk")["error"] + ": Expecting value: line 1 column 1"


def _bad_sacct_row() -> str:
    """The real sacct recording's header and first job with a state no Slurm prints."""
    head, first = (SACCT / "regression.utc.txt").read_text().splitlines()[:2]
    fields = first.split("|")
    fields[head.split("|").index("State")] = "EXPLODED"
    return head + "\n" + "|".join(fields) + "\n"


# Real errors through the console script, in each language: (arguments, file to create,
# words of the input the line quotes: column names).
CASES = [
    (["profile", "{tmp}/sacct.txt"], _bad_sacct_row(), ["sacct"]),
    (["profile", "{tmp}/missing.txt"], None, []),
    (["profile", "{tmp}/jobs.csv"], "job_id,name\n", ["state"]),
    (["profile", "{tmp}/jobs.json"], "[1, 2, 3]", []),
    (["queue", "{tmp}/jobs.csv", "--tz", "Mars/Olympus"], "job_id\n1\n", []),
    (["evidence"], None, []),
]


@pytest.mark.parametrize("lang", TRANSLATED)
@pytest.mark.parametrize(("args", "content", "quoted"), CASES, ids=lambda c: str(c)[:40])
def test_command_errors_speak_the_language(
    lang: str, args: list[str], content: str | None, quoted: list[str], tmp_path: Path
) -> None:
    argv = [a.format(tmp=tmp_path) for a in args]
    if content is not None:
        Path(argv[1]).write_text(content)
    english = run_cli(*(a.format(lang="en") for a in argv), cwd=tmp_path)
    local = run_cli("--lang", lang, *argv, cwd=tmp_path)
    assert english.returncode == local.returncode == 2, english.stderr
    assert english.stderr.startswith("error: ")
    (line,) = local.stderr.splitlines()
    assert line.startswith(catalogue("errors", lang)["error"] + ": ")
    assert english_runs(_prose(line), [str(tmp_path), *quoted]) == [], (english.stderr, line)


def test_json_errors_stay_english(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.txt")
    english = run_cli("profile", missing, "--json", cwd=tmp_path)
    local = run_cli("--lang", "ru", "profile", missing, "--json", cwd=tmp_path)
    assert json.loads(english.stdout) == json.loads(local.stdout)
    assert json.loads(local.stdout)["error"] == "no such file"


def _regex(template: str) -> str:
    """A message template as a regular expression (each field any text)."""
    return re.sub(r"\\\{\w+\\\}", ".+", re.escape(template))


# Command lines that click refuses, and the template of its message.
USAGE = [
    (["nosuch"], "No such command {name}."),
    (["queu"], "No such command {name}. Did you mean {suggestion}?"),
    (["queue", "--bogus"], "No such option: {name}"),
    (["queue", "--jsn"], "No such option: {name} (Possible options: {possible})"),
    (["--lang", "{lang}"], "Missing command."),
    (["hash"], "Missing argument {name}."),
    (["replay", "--gpus"], "Option {name} requires an argument."),
    (["columns", "extra"], "Got unexpected extra argument(s) ({args})"),
    (["profile", "--weeks", "x"], "Invalid value for {name}: {problem}"),
    (["--lang", "de", "columns"], "Invalid value for {name}: {problem}"),
]


def test_every_click_message_is_provoked() -> None:
    assert {t for _a, t in USAGE} | {"{value} is not one of {choices}"} == set(CLICK_MESSAGES)


@pytest.mark.parametrize(("argv", "template"), USAGE, ids=lambda x: str(x)[:30])
def test_usage_errors_speak_the_language(argv: list[str], template: str, tmp_path: Path) -> None:
    english = run_cli(*(a.format(lang="en") for a in argv), cwd=tmp_path)
    assert english.returncode == 2
    (line,) = english.stderr.splitlines()
    # Click's own wording, so a newer typer that rewords a message fails here.
    assert re.search(_regex(template), line), line
    for lang in TRANSLATED:
        # --lang before the rest (the "de" case keeps its bad value: the env var speaks).
        args = [a.format(lang=lang) for a in argv]
        args = args if args[0] == "--lang" else ["--lang", lang, *args]
        env = {"GPUDECIDE_LANG": lang}
        local = run_cli(*args, cwd=tmp_path, env=env)
        assert local.returncode == 2
        (said,) = local.stderr.splitlines()
        assert said.startswith(catalogue("errors", lang)["error"] + ": "), said
        # The command line's own words and the language codes stay as written.
        quoted = [*args, "python -m gpudecide", "en", "ru", "kk"]
        assert english_runs(_prose(said), quoted) == [], said


@pytest.mark.parametrize("lang", TRANSLATED)
def test_a_translated_error_keeps_every_value(lang: str) -> None:
    """Each template filled with distinct values, said in `lang`: every value is in the line
    as written (a translation never drops or splits the file, field or quoted input)."""
    lost, tried, translated = [], 0, 0
    reserved = {"path", "line", "field", "hint", "message"}
    for template in TEMPLATES:
        names = sorted({n for _l, n, _s, _c in string.Formatter().parse(template) if n})
        if not names or reserved & set(names):
            continue
        values = {n: f"v{i}x" for i, n in enumerate(names)}
        try:
            english = template.format(**values)
        except (IndexError, KeyError, ValueError):
            continue  # "{}" or a format spec: not a message with named fields
        error = InputError(template, path="logs/q.csv", line=3, **values)
        assert error.message == english
        with speaking(lang):  # type: ignore[arg-type]
            said = error.one_line()
        tried += 1
        translated += english not in said
        missing = [v for v in values.values() if v not in said]
        if missing or "logs/q.csv:3" not in said:
            lost.append(f"{template!r} -> {said!r}")
    assert not lost, f"{len(lost)} lose a value: " + "; ".join(lost[:4])
    # The check reaches the templates with fields, and nearly all of them are translated.
    assert tried >= 150 and translated >= tried - 5, (tried, translated)
