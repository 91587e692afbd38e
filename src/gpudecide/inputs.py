"""Reading YAML input files into pydantic models with errors that name file, line and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from gpudecide.errors import InputError

M = TypeVar("M", bound=BaseModel)


def node_line(root: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    """Line (1-based) of the YAML node at a pydantic error location, or its nearest parent."""
    node = root
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
            if match is None:
                break
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                break
            node = node.value[part]
        else:
            break
        line = node.start_mark.line + 1
    return line


def load_yaml_model(path: Path, model: type[M]) -> M:
    """Parse and validate a YAML file; the first problem becomes a one-line InputError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=path) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(
            f"not valid YAML: {problem}",
            path=path,
            line=mark.line + 1 if mark is not None else None,
        ) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError("must be a mapping of keys to values", path=path, line=1)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        field = ".".join(str(p) for p in loc) or None
        message = first["msg"]
        if first["type"] == "extra_forbidden":
            message = "unknown key (misspelt? see the template's comments)"
        raise InputError(message, path=path, line=node_line(root, loc), field=field) from None
