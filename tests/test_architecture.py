"""The house as docs/architecture.md draws it, held against the code's own imports (issue 23):
the core never imports an analysis, the packages import each other in one direction only,
library code never imports a command module, the root command line stays small, every
public module declares its surface and no module takes another one's private name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gpudecide

SRC = Path(gpudecide.__file__).parent
PACKAGES = (
    "jobs",
    "queue",
    "cost",
    "artifacts",
    "portability",
    "drills",
    "governance",
    "decision",
    "attest",
    "marks",
)
# Composition roots: they know every analysis (the command line and the program around it,
# the report and demo registries, the ledger of records).
ROOTS = {"cli.py", "__main__.py", "program.py", "sections.py", "demo.py", "ledger.py", "status.py"}


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "demo_data" not in p.parts)


def _imports(path: Path) -> list[tuple[str, int, list[str]]]:
    """(module imported, line, names) of every `import` of gpudecide code in a file, also
    inside functions; imports for type checking only are left out (they run nowhere)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for n in ast.walk(node)}
    out = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("gpudecide"):
                out.append((node.module, node.lineno, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(a.name, node.lineno, []) for a in node.names if a.name.startswith("gpudecide")]
    return out


def _package(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in PACKAGES else None


def _own_package(path: Path) -> str | None:
    rel = path.relative_to(SRC).parts
    return rel[0] if len(rel) > 1 and rel[0] in PACKAGES else None


def test_the_core_imports_no_analysis() -> None:
    """Modules at the root of the package (but the composition roots) and report/ stand
    below every analysis."""
    found = []
    for path in _modules():
        rel = path.relative_to(SRC)
        if _own_package(path) is not None or (rel.name in ROOTS and len(rel.parts) == 1):
            continue
        for module, line, _names in _imports(path):
            if _package(module) is not None:
                found.append(f"{rel}:{line} imports {module}")
    assert not found, found


def _package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {p: set() for p in PACKAGES}
    for path in _modules():
        own = _own_package(path)
        if own is None:
            continue
        for module, _line, _names in _imports(path):
            other = _package(module)
            if other is not None and other != own:
                graph[own].add(other)
    return graph


def test_the_packages_import_each_other_in_one_direction() -> None:
    """No two analysis packages import each other, by any path (the graph has no cycle)."""
    graph = _package_graph()
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(graph[node]):
            if nxt in path:
                cycles.append(" -> ".join([*path[path.index(nxt) :], nxt]))
            elif len(path) < len(PACKAGES):
                visit(nxt, [*path, nxt])

    for start in PACKAGES:
        visit(start, [start])
    assert not cycles, sorted(set(cycles))


def test_library_code_never_imports_a_command_module() -> None:
    """A package's cli.py is its commands' shell; only the composition roots import it."""
    found = []
    for path in _modules():
        rel = path.relative_to(SRC)
        if len(rel.parts) == 1 and rel.name in ROOTS:
            continue
        for module, line, _names in _imports(path):
            if module.endswith(".cli") and module != f"gpudecide.{rel.parts[0]}.cli":
                found.append(f"{rel}:{line} imports {module}")
            own_cli = module == f"gpudecide.{rel.parts[0]}.cli"
            if own_cli and rel.name != "cli.py":
                found.append(f"{rel}:{line} imports its own package's cli")
    assert not found, found


def test_the_root_command_line_stays_small() -> None:
    lines = (SRC / "cli.py").read_text(encoding="utf-8").count("\n")
    assert lines < 250, lines


def _public_modules() -> list[Path]:
    return [
        p
        for p in _modules()
        if not p.name.startswith("_") and p.name != "__main__.py" and "templates" not in p.parts
    ]


def _declared(tree: ast.Module) -> list[str] | None:
    """The names of a module's `__all__`, None when it has none."""
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = getattr(node, "value", None)
            assert value is not None
            return list(ast.literal_eval(value))
    return None


def _top_level(tree: ast.Module) -> set[str]:
    """The names a module's own top level binds (classes, functions, constants, aliases)."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                elts = target.elts if isinstance(target, ast.Tuple) else [target]
                out |= {t.id for t in elts if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return out - {"__all__"}


def _bound(tree: ast.Module) -> set[str]:
    """Every name the module binds anywhere, imports included (what `__all__` may name)."""
    out = set(_top_level(tree))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out |= {
                leaf.id for t in node.targets for leaf in ast.walk(t) if isinstance(leaf, ast.Name)
            }
        elif isinstance(node, ast.ImportFrom | ast.Import):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return out


def surface_problems(tree: ast.Module) -> list[str]:
    """What is wrong with a module's declared surface: no `__all__`, a name it lists and
    lacks, a public name (no underscore) it defines and does not list."""
    names = _declared(tree)
    if names is None:
        return ["declares no __all__"]
    lacking = sorted(set(names) - _bound(tree))
    undeclared = sorted(n for n in _top_level(tree) - set(names) if not n.startswith("_"))
    return [f"__all__ names what it lacks: {lacking}"] * bool(lacking) + [
        f"public names not in __all__: {undeclared}"
    ] * bool(undeclared)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_names_taken(tree: ast.Module) -> list[str]:
    """The private names a module takes from gpudecide's other modules: `from x import _y`,
    and `m._y` where `m` is a gpudecide module or name it imported."""
    ours: set[str] = set()
    taken: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("gpudecide"):
                ours |= {a.asname or a.name for a in node.names}
                taken += [f"{node.module}.{a.name}" for a in node.names if _private(a.name)]
        elif isinstance(node, ast.Import):
            ours |= {(a.asname or a.name) for a in node.names if a.name.startswith("gpudecide")}
    taken += [
        f"{node.value.id}.{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ours
        and _private(node.attr)
    ]
    return taken


@pytest.mark.parametrize("path", _public_modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_a_public_module_declares_its_surface(path: Path) -> None:
    """`__all__` lists every public name the module defines, and only names it defines or
    imports (httpx's exported members)."""
    problems = surface_problems(ast.parse(path.read_text(encoding="utf-8")))
    assert not problems, f"{path.relative_to(SRC)}: {problems}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_takes_another_ones_private_name(path: Path) -> None:
    taken = private_names_taken(ast.parse(path.read_text(encoding="utf-8")))
    assert not taken, f"{path.relative_to(SRC)} takes {taken}"


def test_the_surface_checks_see_what_they_look_for() -> None:
    """The twins: an undeclared public name, a listed name the module lacks and a missing
    `__all__` are found, and so are private names taken by import and by attribute."""
    tree = ast.parse("__all__ = ['a', 'gone']\ndef a(): ...\ndef b(): ...\nX, Y = 1, 2\n_c = 3\n")
    assert surface_problems(tree) == [
        "__all__ names what it lacks: ['gone']",
        "public names not in __all__: ['X', 'Y', 'b']",
    ]
    assert surface_problems(ast.parse("def a(): ...\n")) == ["declares no __all__"]
    source = (
        "import os\nfrom gpudecide.jobs import sacct\nfrom gpudecide.jobs.sacct import _crowded\n"
        "sacct._names_of('p')\nos._exit(0)\nsacct.__name__\n"
    )
    assert private_names_taken(ast.parse(source)) == [
        "gpudecide.jobs.sacct._crowded",
        "sacct._names_of",
    ]


def test_a_commands_module_declares_only_its_commands() -> None:
    """`jobs.cli` is the profile's command line: its surface is the commands and `register`;
    what other packages' commands share (the log options, `LogCommand`, `workspace_logs`)
    is imported from `jobs.log_command`, where it is declared, not re-exported here."""
    from gpudecide.jobs import cli

    assert sorted(cli.__all__) == ["columns", "profile", "register"]
