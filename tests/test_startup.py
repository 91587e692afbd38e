"""Start-up loads no heavy library (issue 25): `import gpudecide.cli` and `--help` in every
language import none of matplotlib, DuckDB, Arrow, NumPy, PyTorch, safetensors or Jinja2;
each command imports its library inside its body, where the work is done.

Each check runs in a fresh interpreter (the test session itself has imported everything) and
reads `sys.modules` there; a twin proves the check sees a heavy import when one happens.
The time it takes is benchmarks/startup.py's business, not a test's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

HEAVY = ("matplotlib", "duckdb", "pyarrow", "numpy", "torch", "safetensors", "jinja2")

# Runs `body` in a fresh interpreter, then prints the heavy top-level modules it loaded.
_PROBE = """
import json, sys
{body}
heavy = {heavy!r}
print(json.dumps(sorted(m for m in heavy if m in sys.modules)))
"""

# `gpudecide ARGS` in-process through the app, as the console script runs it, without exiting.
_CLI = """
import contextlib, io
from gpudecide.cli import app
with contextlib.redirect_stdout(io.StringIO()):
    app({args!r}, prog_name="gpudecide", standalone_mode=False)
"""


def _last_json(code: str, cwd: Path | None = None) -> Any:
    """The JSON value on the last line `code` printed, run in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _loaded(body: str, cwd: Path | None = None, watched: tuple[str, ...] = HEAVY) -> list[str]:
    """The `watched` modules (the heavy libraries) in `sys.modules` after `body` ran in a
    fresh interpreter."""
    loaded: list[str] = _last_json(_PROBE.format(body=body, heavy=watched), cwd)
    return loaded


def test_importing_the_command_line_loads_no_heavy_library() -> None:
    assert _loaded("import gpudecide.cli") == []


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--lang", "ru", "--help"],
        ["--lang", "kk", "--help"],
        ["init", "--help"],
        ["evidence", "--help"],
        ["assess", "--help"],
        ["check", "--help"],
        ["check", "raci", "--help"],
        ["profile", "--help"],
        ["queue", "--help"],
        ["cost", "--help"],
    ],
    ids=" ".join,
)
def test_help_loads_no_heavy_library(args: list[str], tmp_path: Path) -> None:
    assert _loaded(_CLI.format(args=args), cwd=tmp_path) == []


def test_init_loads_no_heavy_library(tmp_path: Path) -> None:
    args = ["init", str(tmp_path / "ws")]
    assert _loaded(_CLI.format(args=args), cwd=tmp_path) == []
    assert (tmp_path / "ws" / "gpudecide.yaml").is_file()


# What a command that prints no table, shows no bar and writes no record does not need:
# rich's table and progress modules, the evidence record models, the C foreign-function layer.
UNUSED_BY_INIT = ("rich.table", "rich.progress", "gpudecide.evidence", "ctypes")


@pytest.mark.parametrize("args", [["init", "ws"], ["init", "ws", "--option", "a:managed"]])
def test_init_loads_only_what_it_uses(args: list[str], tmp_path: Path) -> None:
    """`init` reads and writes gpudecide.yaml (the workspace models, the author rule of
    `gpudecide.author`) and nothing a record, a table or a progress bar needs."""
    assert _loaded(_CLI.format(args=args), cwd=tmp_path, watched=UNUSED_BY_INIT) == []
    assert (tmp_path / "ws" / "gpudecide.yaml").is_file()


def test_the_probe_sees_what_evidence_loads(tmp_path: Path) -> None:
    """The twin: a command that lists records and prints a table loads both."""
    ws = _workspace_in(tmp_path, "en")
    loaded = _loaded(_CLI.format(args=["evidence"]), cwd=ws, watched=UNUSED_BY_INIT)
    assert loaded == ["gpudecide.evidence", "rich.table"]


def test_the_shared_option_types_load_no_heavy_library() -> None:
    """The options every log command shares (jobs.log_command, used by queue too), the
    console's and the words modules import without a parser, a chart or a table engine."""
    body = (
        "import gpudecide.console, gpudecide.jobs.log_command, gpudecide.jobs.words, "
        "gpudecide.jobs.columns, gpudecide.cost.words, gpudecide.queue.words"
    )
    assert _loaded(body) == []


def test_the_queue_figures_models_load_no_heavy_library() -> None:
    """A reader of a queue or replay record's figures (the decision and cost packages, through
    figures_of) loads no table engine: the models live apart from the analysis that
    produces them."""
    assert _loaded("import gpudecide.queue.figures") == []


# pydantic's model machinery (pydantic.main and the schema builder behind it): loaded by
# the first model a module declares, about 80 ms on this machine; `import pydantic` alone
# (the floor of benchmarks/startup.py) does not load it.
MODELS = ("pydantic.main", "pydantic._internal._model_construction")
# pydantic itself (its core, ~25 ms here): the root's help page needs none of it, in a
# workspace or outside one
PYDANTIC = ("pydantic", "pydantic_core", *MODELS)


@pytest.mark.parametrize(
    "body",
    [
        "import gpudecide.cli",
        _CLI.format(args=["--help"]),
        _CLI.format(args=["--lang", "kk", "--help"]),
    ],
    ids=["import", "--help", "--lang kk --help"],
)
def test_the_command_line_declares_no_model_until_a_command_runs(body: str, tmp_path: Path) -> None:
    """Outside a workspace, the command line and its root help page declare no pydantic
    model: the evidence, workspace and settings models load when a command opens its
    workspace or writes a record. (A command's own help page loads pydantic through typer,
    which converts parameter values with pydantic's TypeAdapter.)"""
    assert _loaded(body, cwd=tmp_path, watched=PYDANTIC) == []


def _workspace_in(tmp_path: Path, lang: str) -> Path:
    from gpudecide.workspace import init

    root = tmp_path / "ws"
    init(root)
    config = root / "gpudecide.yaml"
    text = config.read_text()
    assert "  language: en" in text
    config.write_text(text.replace("  language: en", f"  language: {lang}", 1))
    return root


# `gpudecide --help` in-process, printing the first line of the page it wrote
_HELP_FIRST_LINE = """
import contextlib, io
from gpudecide.cli import main
import sys
sys.argv = ["gpudecide", "--help"]
page = io.StringIO()
with contextlib.redirect_stdout(page), contextlib.suppress(SystemExit):
    main()
print(json.dumps(page.getvalue()), file=sys.stderr)
"""


def test_help_inside_a_workspace_speaks_its_language_without_a_model(tmp_path: Path) -> None:
    """Inside a workspace, `--help` is in the workspace's `report.language`, read from
    gpudecide.yaml without its models: none is declared, pydantic is not even imported."""
    root = _workspace_in(tmp_path, "kk")
    assert _loaded(_HELP_FIRST_LINE, cwd=root, watched=PYDANTIC) == []
    done = subprocess.run(
        [sys.executable, "-c", "import json\n" + _HELP_FIRST_LINE],
        capture_output=True,
        text=True,
        cwd=root / "logs",
        timeout=120,
    )
    page = json.loads(done.stderr.strip().splitlines()[-1])
    english = subprocess.run(
        [sys.executable, "-c", "import json\n" + _HELP_FIRST_LINE],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert "Usage" in json.loads(english.stderr.strip().splitlines()[-1])
    assert "Usage" not in page and "gpudecide" in page


def test_a_workspace_naming_no_language_gives_english_help(tmp_path: Path) -> None:
    """The twin: a `report.language` that is not one gpudecide speaks is not taken (the
    command that opens the workspace refuses it); `--help` stays English."""
    root = _workspace_in(tmp_path, "de")
    done = subprocess.run(
        [sys.executable, "-c", "import json\n" + _HELP_FIRST_LINE],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=120,
    )
    assert "Usage" in json.loads(done.stderr.strip().splitlines()[-1])


def test_the_model_check_sees_a_model() -> None:
    """The twin: the evidence module declares models, and the probe says so."""
    body = "import gpudecide.cli\nimport gpudecide.evidence"
    assert _loaded(body, watched=MODELS) == sorted(MODELS)


def test_the_check_sees_a_heavy_import() -> None:
    """The twin: the report's charts do load matplotlib, and the probe says so."""
    assert "matplotlib" in _loaded("import gpudecide.cli\nimport gpudecide.cost.charts")
    assert "duckdb" in _loaded("import gpudecide.jobs.sql")


def _shape(node: object) -> object:
    """A composed YAML node as data, lines and columns (what node_line reads)."""
    import yaml

    assert isinstance(node, yaml.Node)
    mark = (node.tag, node.start_mark.line, node.start_mark.column)
    if isinstance(node, yaml.ScalarNode):
        return (*mark, node.value)
    if isinstance(node, yaml.MappingNode):
        return (*mark, [(_shape(k), _shape(v)) for k, v in node.value])
    return (*mark, [_shape(v) for v in node.value])


def test_yaml_read_through_libyaml_is_what_the_python_loader_reads() -> None:
    """parse_yaml takes libyaml's scanner when it can (issue 25: the pure-Python scanner was
    most of `check raci`); every YAML file the package ships reads the same through it as
    through BoundedLoader: the same data, every node on the same line and column."""
    import gpudecide
    from gpudecide.inputs import BoundedLoader, parse_yaml

    files = sorted(Path(gpudecide.__file__).parent.rglob("*.yaml"))
    assert len(files) > 10
    for path in files:
        text = path.read_text(encoding="utf-8-sig")
        loader = BoundedLoader(text)
        try:
            root = loader.get_single_node()
            data = loader.construct_document(root) if root is not None else None
        finally:
            loader.dispose()
        fast_data, fast_root = parse_yaml(text, path)
        assert fast_data == data, path
        assert (root is None) == (fast_root is None), path
        if root is not None:
            assert _shape(fast_root) == _shape(root), path


def test_a_valid_yaml_file_is_read_by_libyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """The twin: with the Python loader out of reach, a valid file still reads (libyaml
    read it), and a broken one still fails with the Python loader's message."""
    import yaml

    from gpudecide import inputs
    from gpudecide.errors import InputError

    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML without libyaml reads through BoundedLoader alone")
    python_loader = inputs.BoundedLoader

    def refuse(text: str) -> None:
        raise AssertionError("the Python loader was used")

    monkeypatch.setattr(inputs, "BoundedLoader", refuse)
    data, _root = inputs.parse_yaml("a: 1\nb: [x, y]\n", "t.yaml")
    assert data == {"a": 1, "b": ["x", "y"]}
    monkeypatch.setattr(inputs, "BoundedLoader", python_loader)
    with pytest.raises(InputError, match="mapping values are not allowed here"):
        inputs.parse_yaml("a: b: c\n", "t.yaml")


def test_the_country_codes_are_babels() -> None:
    """options.ISO_COUNTRIES is written out so that no workspace load reads Babel's English
    locale; it must stay the list Babel's CLDR gives (a Babel upgrade that changes it
    fails here)."""
    from babel import Locale

    from gpudecide.options import ISO_COUNTRIES

    codes = (str(t) for t in Locale("en").territories)
    assert frozenset(t for t in codes if len(t) == 2 and t.isalpha() and t != "ZZ") == (
        ISO_COUNTRIES
    )


@pytest.mark.parametrize(
    ("args", "built"),
    [
        (["evidence"], ["evidence"]),
        (["--lang", "ru", "evidence", "--json"], ["evidence"]),
        (["--author=ops", "check", "raci"], ["check"]),
        (["--version"], None),
        (["--help"], None),
        ([], None),
        (["evidenc"], None),
        (["--lang", "evidence"], None),
        (["--", "evidence"], ["evidence"]),
        (["--json", "--"], None),
    ],
    ids=repr,
)
def test_a_run_builds_only_the_command_it_names(args: list[str], built: list[str] | None) -> None:
    """typer turns every registered function into a click command on each run; a command
    line naming one builds that one (a group with all of its commands), any other line the
    whole tree, so that the root's help and click's "did you mean" see every name."""
    import typer

    from gpudecide.cli import app
    from gpudecide.console import invoked_only

    every = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    assert len(every) > 20
    names = sorted(typer.main.get_command(invoked_only(app, args)).commands)  # type: ignore[attr-defined]
    assert names == (every if built is None else built)
    if built == ["check"]:
        group = typer.main.get_command(invoked_only(app, args)).commands["check"]  # type: ignore[attr-defined]
        assert {"raci", "isolation", "secrets"} <= set(group.commands)


def test_the_listing_shows_every_command_as_the_full_tree_does() -> None:
    """The root's help and click's suggestions read a listing of the commands (no
    parameters built): each command there has the name, help and flags of the real one."""
    import typer

    from gpudecide.cli import app
    from gpudecide.console import invoked_only

    full = typer.main.get_command(app)
    listed = typer.main.get_command(invoked_only(app, ["--help"]))

    def shown(group: Any) -> dict[str, Any]:
        out = {}
        for name, cmd in group.commands.items():
            out[name] = (cmd.help, cmd.short_help, cmd.hidden, cmd.deprecated,
                         getattr(cmd, "rich_help_panel", None))  # fmt: skip
            if hasattr(cmd, "commands"):
                out |= {f"{name} {k}": v for k, v in shown(cmd).items()}
        return out

    assert shown(listed) == shown(full)
    assert len(shown(full)) > 30
    # the root's own options are the real ones
    assert [p.name for p in listed.params] == [p.name for p in full.params]  # type: ignore[attr-defined]
    assert all(not c.params for c in listed.commands.values() if not hasattr(c, "commands"))  # type: ignore[attr-defined]


@pytest.mark.parametrize("lang", ["en", "ru", "kk"])
def test_the_roots_help_reads_as_that_of_the_full_tree(
    lang: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gpudecide --help` printed from the listing is, byte for byte, the help of the whole
    tree built from every signature, in each language."""
    import typer

    from gpudecide import console
    from gpudecide.cli import app

    printed = []
    for tree in (app, console.invoked_only(app, ["--help"])):
        monkeypatch.setattr(sys, "argv", ["gpudecide", "--lang", lang, "--help"])
        monkeypatch.setattr(console, "invoked_only", lambda _app, _args, tree=tree: tree)
        with pytest.raises(SystemExit) as done:
            console.run_app(typer.Typer())
        assert done.value.code == 0
        printed.append(capsys.readouterr().out)
    assert printed[0] == printed[1]
    assert "export-test" in printed[0] and "status" in printed[0]


def test_a_group_called_without_a_command_shows_its_help_and_no_error_line(
    tmp_path: Path,
) -> None:
    """`gpudecide` alone (and `gpudecide check`) print the help and exit 2, without an
    error line of nothing after it."""
    for args in ([], ["check"]):
        done = subprocess.run(
            [sys.executable, "-m", "gpudecide", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
        assert done.returncode == 2
        assert "Usage:" in done.stdout and "Commands" in done.stdout
        assert done.stderr == ""


_MAIN = """
import os, sys
os.environ.pop("PYDANTIC_DISABLE_PLUGINS", None)
sys.argv = ["gpudecide", {args}]
from gpudecide import cli
try:
    cli.main()
except SystemExit:
    pass
from pydantic.plugin import _loader
print(_loader._plugins is None)
"""


@pytest.mark.parametrize("args", ["'--help'", "'init', 'ws'"])
def test_the_command_line_looks_up_no_pydantic_plugin(args: str, tmp_path: Path) -> None:
    """The console script builds its validators without pydantic's scan of every installed
    distribution for plugins."""
    done = subprocess.run(
        [sys.executable, "-c", _MAIN.format(args=args)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "True"
    assert args != "'init', 'ws'" or (tmp_path / "ws" / "gpudecide.yaml").is_file()


def test_the_library_used_directly_keeps_pydantics_plugins() -> None:
    """The twin: importing the library leaves pydantic as it is, and the probe sees its scan."""
    body = (
        "import os\nos.environ.pop('PYDANTIC_DISABLE_PLUGINS', None)\n"
        "import gpudecide.evidence\n"
        "from pydantic.plugin import _loader\nprint(_loader._plugins is None)"
    )
    done = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "False", done.stderr[-2000:]


# A run of the command line with the collector watched: the threshold in force at each
# collection while it ran, and the collector's state at the process's end (atexit, after the
# program's finally).
_COLLECTED = """
import atexit, gc, json, sys
runs = []
def seen(phase, info):
    if phase == "stop":
        runs.append(gc.get_threshold()[0])
gc.callbacks.append(seen)
def end():
    state = {{"runs": runs, "threshold": gc.get_threshold(), "frozen": gc.get_freeze_count()}}
    print(json.dumps(state))
atexit.register(end)
sys.argv = ["gpudecide", {args}]
from gpudecide.{module} import main
try:
    main()
except SystemExit:
    pass
"""


def _collected(module: str, args: str, cwd: Path) -> dict[str, Any]:
    state: dict[str, Any] = _last_json(_COLLECTED.format(module=module, args=args), cwd)
    return state


@pytest.mark.parametrize("args", ["'--help'", "'init', 'ws'"])
def test_the_program_runs_its_command_without_a_collection(args: str, tmp_path: Path) -> None:
    """The console script (`program.main`) sets the collector's threshold before it imports
    the command line: `--help` and `init` run without one collection under it (importing the
    program itself, compiled from source where no bytecode is cached, may take one before),
    and the process ends with its objects frozen, its atexit handlers still run (issue 25)."""
    state = _collected("program", args, tmp_path)
    assert state["runs"].count(100_000) == 0, state
    assert len(state["runs"]) <= 2, state
    assert state["threshold"] == [100_000, 10, 10]
    assert state["frozen"] > 10_000
    assert args != "'init', 'ws'" or (tmp_path / "ws" / "gpudecide.yaml").is_file()


def test_the_command_line_run_in_process_keeps_the_interpreters_collector(tmp_path: Path) -> None:
    """The twin: `cli.main`, as code that imports gpudecide runs it, leaves the collector as
    Python sets it, and the probe sees the collections that the program avoids."""
    state = _collected("cli", "'--help'", tmp_path)
    default = _last_json("import gc; print(list(gc.get_threshold()))")
    assert len(state["runs"]) > 10
    assert state["threshold"] == default
    assert state["frozen"] == 0


def test_the_console_script_is_the_program() -> None:
    """`gpudecide` and `python -m gpudecide` both start at `program.main`."""
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert project["project"]["scripts"] == {"gpudecide": "gpudecide.program:main"}
    main = (Path(__file__).parents[1] / "src" / "gpudecide" / "__main__.py").read_text()
    assert "from gpudecide.program import main" in main
