"""The jobs package's declared public surface (issue 23 item 5): every module lists its
public names in `__all__`, and no module takes another one's private name."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

import gpudecide.jobs as jobs

MODULES = sorted(m.name for m in pkgutil.iter_modules(jobs.__path__))


def _module(name: str) -> tuple[ModuleType, ast.Module]:
    module = importlib.import_module(f"gpudecide.jobs.{name}")
    assert module.__file__ is not None
    return module, ast.parse(Path(module.__file__).read_text(encoding="utf-8"))


def _defined(tree: ast.Module) -> set[str]:
    """The names a module's own top level binds (classes, functions, constants, aliases)."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                elts = target.elts if isinstance(target, ast.Tuple) else [target]
                out |= {t.id for t in elts if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return out


@pytest.mark.parametrize("name", MODULES)
def test_each_module_declares_its_public_names(name: str) -> None:
    """`__all__` lists every name the module defines without an underscore, and only names
    it has."""
    module, tree = _module(name)
    declared = set(getattr(module, "__all__", ()))
    public = {n for n in _defined(tree) if not n.startswith("_")}
    assert public <= declared, sorted(public - declared)
    assert all(hasattr(module, n) for n in declared), sorted(declared)


def _private(attr: str) -> bool:
    return attr.startswith("_") and not (attr.startswith("__") and attr.endswith("__"))


def _taken(tree: ast.Module, modules: set[str]) -> list[str]:
    """The private names a module takes from others: `from x import _y`, `module._y` (of
    the named modules)."""
    taken = [
        a.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for a in node.names
        if _private(a.name)
    ]
    return taken + [
        f"{node.value.id}.{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in modules
        and _private(node.attr)
    ]


@pytest.mark.parametrize("name", MODULES)
def test_no_module_takes_a_private_name_of_another(name: str) -> None:
    """No `from x import _name` and no `module._name` across gpudecide's modules."""
    module, tree = _module(name)
    ours = {
        n
        for n, v in vars(module).items()
        if isinstance(v, ModuleType) and v.__name__.startswith("gpudecide")
    }
    assert _taken(tree, ours) == []


def test_the_commands_module_declares_only_its_commands() -> None:
    """`jobs.cli` is the profile's command line: its surface is the commands and `register`;
    what other packages' commands share (the log options, `LogCommand`, `workspace_logs`)
    is imported from `jobs.log_command`, where it is declared, not re-exported here."""
    from gpudecide.jobs import cli

    assert sorted(cli.__all__) == ["columns", "profile", "register"]


def test_the_surface_checks_see_what_they_look_for() -> None:
    """Negative: a public name left out of `__all__`, and private names taken, are found."""
    tree = ast.parse("__all__ = ['a']\ndef a(): ...\ndef b(): ...\nX, Y = 1, 2\n_c = 3\n")
    assert {n for n in _defined(tree) if not n.startswith("_")} - {"a"} == {"b", "X", "Y"}
    source = "from gpudecide.jobs.sacct import _crowded\nsacct._names_of('p', None)\n"
    assert _taken(ast.parse(source), {"sacct"}) == ["_crowded", "sacct._names_of"]
