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
# Composition roots: they know every analysis (the command line, the report and demo
# registries, the ledger of records).
ROOTS = {"cli.py", "__main__.py", "sections.py", "demo.py", "ledger.py", "status.py"}


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


@pytest.mark.parametrize("path", _public_modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_a_public_module_declares_its_surface(path: Path) -> None:
    """`__all__` lists names the module defines or imports (httpx's exported members)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    declared = [
        n
        for n in tree.body
        if (
            isinstance(n, ast.Assign | ast.AnnAssign)
            and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in getattr(n, "targets", [])
            )
        )
        or (isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "__all__")
    ]
    assert declared, f"{path.relative_to(SRC)} declares no __all__"
    names = ast.literal_eval(declared[0].value)  # type: ignore[arg-type]
    defined = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        defined.add(leaf.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
    missing = sorted(set(names) - defined)
    assert not missing, f"{path.relative_to(SRC)}: __all__ names what it lacks: {missing}"


def test_no_module_takes_another_ones_private_name() -> None:
    found = []
    for path in _modules():
        for module, line, names in _imports(path):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private:
                found.append(f"{path.relative_to(SRC)}:{line} takes {private} from {module}")
    assert not found, found
