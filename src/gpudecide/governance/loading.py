"""Reading governance inputs: validated YAML with the line of every option id kept.

The shared bounded loader names file, line and field for a schema error; the option ids in
a file are checked afterwards against gpudecide.yaml, and an unknown one must still name its
line, so the YAML node tree is kept beside the model to find it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel

from gpudecide.errors import InputError
from gpudecide.inputs import load_yaml, node_line, validate_model
from gpudecide.options import OptionDecl, require_known

M = TypeVar("M", bound=BaseModel)
Loc = tuple[int | str, ...]


class Loaded:
    """A validated input file with its YAML node tree (for the lines of later checks)."""

    def __init__(self, path: Path, model: BaseModel, root: yaml.Node | None) -> None:
        self.path = path
        self.model = model
        self.root = root

    def line(self, loc: Loc) -> int | None:
        """Line of the value at `loc` (a pydantic-style location)."""
        return node_line(self.root, loc)

    def error(self, message: str, loc: Loc, hint: str | None = None) -> InputError:
        """An InputError naming this file, the line of `loc` and the field."""
        return InputError(
            message,
            path=self.path,
            line=self.line(loc),
            field=".".join(str(p) for p in loc),
            hint=hint,
        )

    def require_option(self, option_id: str, options: list[OptionDecl], loc: Loc) -> None:
        """An option id that gpudecide.yaml does not declare is bad input at its line."""
        require_known(
            option_id,
            options,
            path=self.path,
            field=".".join(str(p) for p in loc),
            line=self.line(loc),
        )

    def require_in(self, value: str, allowed: Iterable[str], what: str, loc: Loc) -> None:
        """A reference to something the same file must declare (a person, an asset)."""
        known = sorted(set(allowed))
        if value not in known:
            raise self.error(
                f"unknown {what} {value!r}",
                loc,
                hint=f"declare it first (declared: {', '.join(known) or 'none'})",
            )


def load(path: Path, model: type[M]) -> tuple[M, Loaded]:
    """Validate `path` against `model`; return the model and its line finder."""
    data, root = load_yaml(path)
    parsed = validate_model(data, root, path, model)
    return parsed, Loaded(path, parsed, root)
