"""Reading governance inputs: validated YAML with the line of every option id kept.

The shared bounded loader names file, line and field for a schema error; the option ids in
a file are checked afterwards against gpudecide.yaml, and an unknown one must still name its
line, so the YAML node tree is kept beside the model to find it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal, TypedDict, TypeVar

import yaml
from pydantic import BaseModel

from gpudecide.errors import InputError
from gpudecide.inputs import load_yaml, node_line, validate_model
from gpudecide.options import OptionDecl, require_known

__all__ = [
    "Loaded",
    "Loc",
    "Where",
    "load",
]

_M = TypeVar("_M", bound=BaseModel)
Loc = tuple[int | str, ...]


class Where(TypedDict):
    """The place an InputError names: the file, the line of the value and its field."""

    path: Path
    line: int | None
    field: str


class Loaded:
    """A validated input file with its YAML node tree (for the lines of later checks)."""

    def __init__(self, path: Path, model: BaseModel, root: yaml.Node | None) -> None:
        self.path = path
        self.model = model
        self.root = root

    def line(self, loc: Loc) -> int | None:
        """Line of the value at `loc` (a pydantic-style location)."""
        return node_line(self.root, loc)

    def at(self, loc: Loc) -> Where:
        """Where the value at `loc` is, for `InputError(template, **loaded.at(loc), ...)`."""
        return Where(path=self.path, line=self.line(loc), field=".".join(str(p) for p in loc))

    def require_option(self, option_id: str, options: list[OptionDecl], loc: Loc) -> None:
        """An option id that gpudecide.yaml does not declare is bad input at its line."""
        require_known(
            option_id,
            options,
            path=self.path,
            field=".".join(str(p) for p in loc),
            line=self.line(loc),
        )

    def require_in(
        self, value: str, allowed: Iterable[str], what: Literal["party", "contour"], loc: Loc
    ) -> None:
        """A reference to something the file or gpudecide.yaml must declare: a person or
        vendor of raci.yaml, a contour of a hybrid option."""
        known = sorted(set(allowed))
        if value in known:
            return
        declared = ", ".join(known)
        if what == "party":
            raise InputError(
                "unknown person or vendor {value!r}",
                **self.at(loc),
                hint="declare it under `people` or `vendors` first (declared: {declared})",
                value=value,
                declared=declared or "-",
            )
        raise InputError(
            "unknown contour {value!r}",
            **self.at(loc),
            hint="name one of the hybrid's contours (declared: {declared})",
            value=value,
            declared=declared or "-",
        )


def load(path: Path, model: type[_M]) -> tuple[_M, Loaded]:
    """Validate `path` against `model`; return the model and its line finder."""
    data, root = load_yaml(path)
    parsed = validate_model(data, root, path, model)
    return parsed, Loaded(path, parsed, root)
