"""Reading YAML input files into pydantic models with errors that name file, line and field.

Every YAML the tool reads goes through one bounded loader (issue 14 items 3, 4, 10):
- only regular files, at most `MAX_YAML_BYTES` (a FIFO or /dev/zero is refused by name);
- no anchors, aliases or merge keys: no schema here needs them, and an alias bomb of a few
  hundred bytes expands to gigabytes;
- nesting at most `MAX_DEPTH` levels (deeper documents raised RecursionError);
- a key given twice in one mapping is an error (the last one used to win silently);
- numbers must be finite (`.inf`, `.nan`) and integers at most `MAX_INT_DIGITS` digits.
Each problem is an InputError naming the file and the line.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import yaml

from gpudecide.errors import InputError, TemplateError, excerpt
from gpudecide.fsutil import read_regular

if TYPE_CHECKING:
    # For annotations only: BaseModel loads pydantic's model machinery, which reading this
    # module does not need (the command line's --help imports it).
    from pydantic import BaseModel

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_YAML_BYTES",
    "PYDANTIC_MESSAGES",
    "BoundedLoader",
    "M",
    "in_workspace",
    "load_yaml",
    "load_yaml_model",
    "node_line",
    "parse_yaml",
    "pydantic_template",
    "read_input_text",
    "validate_model",
    "yaml_root",
]


M = TypeVar("M", bound="BaseModel")

MAX_YAML_BYTES = 8 << 20
MAX_DEPTH = 64
# 19 digits hold every 64-bit integer; nothing an input describes needs more.
MAX_INT_DIGITS = 19

_MERGE_TAG = "tag:yaml.org,2002:merge"


class _Problem(Exception):
    """A bound broken while parsing; turned into an InputError with the file's path."""

    def __init__(self, message: str, mark: Any, **values: Any) -> None:
        self.message = message
        self.values: dict[str, Any] = values
        self.line = mark.line + 1 if mark is not None else None
        super().__init__(message)


class _Bounds:
    """The checks of the bounded loaders, on top of PyYAML's composer and constructor."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event: Any = self.peek_event()  # type: ignore[attr-defined]
        if isinstance(event, yaml.AliasEvent):
            raise _Problem("YAML aliases (*name) are not accepted in this file", event.start_mark)
        if getattr(event, "anchor", None):
            raise _Problem("YAML anchors (&name) are not accepted in this file", event.start_mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Problem(
                    "nested deeper than {MAX_DEPTH} levels", event.start_mark, MAX_DEPTH=MAX_DEPTH
                )
            node: yaml.Node | None = super().compose_node(parent, index)  # type: ignore[misc]
            return node
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _value in node.value:
            if key_node.tag == _MERGE_TAG:
                raise _Problem("YAML merge keys (<<) are not accepted", key_node.start_mark)
            key = self.construct_object(key_node, deep=True)  # type: ignore[attr-defined]
            try:
                duplicate = key in seen
            except TypeError:
                raise _Problem("a key must be plain text", key_node.start_mark) from None
            if duplicate:
                raise _Problem(
                    "key {excerpt} is given twice in one mapping",
                    key_node.start_mark,
                    excerpt=excerpt(key, 40),
                )
            seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)  # type: ignore[misc]
        return mapping

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        value: float = super().construct_yaml_float(node)  # type: ignore[misc]
        if not math.isfinite(value):
            raise _Problem("numbers must be finite (no .inf, .nan or overflow)", node.start_mark)
        return value

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        digits = sum(c.isdigit() for c in str(node.value))
        if digits > MAX_INT_DIGITS:
            raise _Problem(
                "integer of more than {MAX_INT_DIGITS} digits",
                node.start_mark,
                MAX_INT_DIGITS=MAX_INT_DIGITS,
            )
        number: int = super().construct_yaml_int(node)  # type: ignore[misc]
        return number


class BoundedLoader(_Bounds, yaml.SafeLoader):
    """SafeLoader without anchors/aliases/merge keys, with depth, duplicate and number checks."""


# The same loader on libyaml's scanner and parser (C), with PyYAML's composer and
# constructor in Python so that every check above runs as it does in BoundedLoader: the
# pure-Python scanner took most of a command's time on a workspace's YAML files (issue 25).
# Only a document it accepts is taken from it; any problem is reported by BoundedLoader,
# so the messages are PyYAML's, word for word.
_CParser: Any
try:
    from yaml.cyaml import CParser as _CParser  # type: ignore[attr-defined]
except ImportError:  # PyYAML built without libyaml: BoundedLoader alone
    _CParser = None
_FastLoader: Any = None
if _CParser is not None:

    class _FastLoader(  # type: ignore[no-redef]
        _Bounds,
        yaml.composer.Composer,
        _CParser,  # type: ignore[misc]
        yaml.constructor.SafeConstructor,
        yaml.resolver.Resolver,
    ):
        def __init__(self, stream: str) -> None:
            _CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)


for _loader in (BoundedLoader, _FastLoader):
    if _loader is not None:
        _loader.add_constructor("tag:yaml.org,2002:float", _loader.construct_yaml_float)
        _loader.add_constructor("tag:yaml.org,2002:int", _loader.construct_yaml_int)


def read_input_text(path: Path, limit: int) -> str:
    """A regular file of at most `limit` bytes as text (UTF-8, a leading BOM dropped)."""
    data = read_regular(path, limit)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=path) from None


def _compose(loader_class: Any, text: str) -> tuple[Any, yaml.Node | None]:
    loader = loader_class(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    finally:
        loader.dispose()
    return data, root


def parse_yaml(text: str, path: str | Path) -> tuple[Any, yaml.Node | None]:
    """Parse YAML text with the bounded loader: (data, root node for line lookups)."""
    # libyaml first (text PyYAML's reader would refuse goes to it directly); whatever it
    # does not accept is parsed again by BoundedLoader, which says what is wrong.
    if _FastLoader is not None and not yaml.reader.Reader.NON_PRINTABLE.search(text):
        try:
            return _compose(_FastLoader, text)
        except (_Problem, yaml.YAMLError, RecursionError):
            pass
    try:
        loader = BoundedLoader(text)
        try:
            root = loader.get_single_node()
            data = loader.construct_document(root) if root is not None else None
        finally:
            loader.dispose()
    except _Problem as exc:
        raise InputError(exc.message, path=path, line=exc.line, **exc.values) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or _reader_problem(exc)
        raise InputError(
            "not valid YAML: {problem}",
            path=path,
            line=mark.line + 1 if mark is not None else None,
            problem=problem,
        ) from None
    except RecursionError:
        raise InputError(
            "nested deeper than {MAX_DEPTH} levels", path=path, MAX_DEPTH=MAX_DEPTH
        ) from None
    return data, root


def _reader_problem(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.reader.ReaderError):
        return f"character {exc.character!r} is not allowed in YAML"
    return "syntax error"


def load_yaml(path: Path, limit: int = MAX_YAML_BYTES) -> tuple[Any, yaml.Node | None]:
    """Read and parse a YAML file with every bound above: (data, root node)."""
    return parse_yaml(read_input_text(path, limit), path)


def yaml_root(path: Path, limit: int = MAX_YAML_BYTES) -> yaml.Node | None:
    """The composed root node of a YAML file (for `node_line`), read with the same bounds."""
    return load_yaml(path, limit)[1]


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


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def _shown_key(part: int | str) -> str:
    """A key of the error's location; a key that is not a plain name is user content (a line
    of a file that is not the expected one): shown short and masked, never in full."""
    text = str(part)
    return text if _PLAIN_KEY.fullmatch(text) else excerpt(text)


# pydantic's own wording of the problems YAML inputs most often have (its error types
# missing, *_parsing, *_type, greater_than..., literal_error, value_error): the errors
# catalogue holds them as patterns, so an error line says them in the reader's language
# (tests/i18n/test_errors.py checks each against pydantic and the catalogue).
PYDANTIC_MESSAGES = (
    "Field required",
    "Input should be a valid number, unable to parse string as a number",
    "Input should be a valid number",
    "Input should be a valid integer, unable to parse string as an integer",
    "Input should be a valid integer, got a number with a fractional part",
    "Input should be a valid integer",
    "Input should be a valid boolean, unable to interpret input",
    "Input should be a valid boolean",
    "Input should be a valid string",
    "Input should be a valid list",
    "Input should be a valid dictionary",
    "Input should be greater than {gt}",
    "Input should be greater than or equal to {ge}",
    "Input should be less than {lt}",
    "Input should be less than or equal to {le}",
    "Input should be {expected}",
    "String should have at least {min_length} characters",
    "Value error, {error}",
)


# The kinds (as JSON schema names them) that the check tells apart, by core-schema leaf type
# or by the Python type of a literal's values; any other leaf is neither.
_LEAF_KINDS = {"int": "integer", "float": "number", "decimal": "number", "bool": "boolean"}
# Nodes that hold the schema of the value they validate under `schema`.
_WRAPPERS = frozenset({
    "default", "nullable", "model", "dataclass", "function-before", "function-after",
    "function-wrap",
})  # fmt: skip


def _branches(node: dict[str, Any], defs: dict[str, Any]) -> list[dict[str, Any]]:
    """The alternatives a core-schema node allows, wrappers, unions and references followed;
    the definitions met on the way are added to `defs` (their refs are unique)."""
    kind = node.get("type")
    if kind == "definitions":
        defs.update((d["ref"], d) for d in node.get("definitions", []) if "ref" in d)
        return _branches(node["schema"], defs)
    if kind == "definition-ref":
        target = defs.get(node.get("schema_ref", ""))
        return [] if target is None else _branches(target, defs)
    if kind in ("union", "tagged-union"):
        choices = node.get("choices", [])
        alternatives = choices.values() if isinstance(choices, dict) else choices
        return [
            b
            for alt in alternatives
            for b in _branches(alt[0] if isinstance(alt, tuple) else alt, defs)
        ]
    if kind == "chain":
        return _branches(node["steps"][0], defs) if node.get("steps") else []
    if kind == "json-or-python":
        return _branches(node["python_schema"], defs)
    if kind == "lax-or-strict":
        return _branches(node["lax_schema"], defs)
    if kind in _WRAPPERS and isinstance(node.get("schema"), dict):
        return _branches(node["schema"], defs)
    return [node]


def _kind(node: dict[str, Any]) -> str | None:
    """What JSON schema would call the type of a leaf, where it is a number or a boolean
    (None: anything else, or literals of mixed types)."""
    if node.get("type") == "literal":
        kinds = {_LEAF_KINDS.get(type(v).__name__) for v in node.get("expected", [])}
        return kinds.pop() if len(kinds) == 1 else None
    return _LEAF_KINDS.get(str(node.get("type")))


def _children(node: dict[str, Any], data: Any) -> list[tuple[int | str, Any, dict[str, Any]]]:
    """The values inside `data` a leaf node validates, each with its key and its schema."""
    kind = node.get("type")
    if isinstance(data, dict):
        if kind in ("model-fields", "typed-dict", "dataclass-args"):
            declared = node.get("fields", {})
            pairs = (
                declared.items()
                if isinstance(declared, dict)
                else ((f["name"], f) for f in declared)
            )
            fields: dict[str, dict[str, Any]] = {}
            for name, fld in pairs:
                alias = fld.get("validation_alias")
                fields[alias if isinstance(alias, str) else name] = fld["schema"]
            extra = node.get("extras_schema")
            out: list[tuple[int | str, Any, dict[str, Any]]] = []
            for key, value in data.items():
                sub = fields.get(key, extra)
                if isinstance(sub, dict):
                    out.append((key, value, sub))
            return out
        if kind == "dict" and isinstance(node.get("values_schema"), dict):
            return [(key, value, node["values_schema"]) for key, value in data.items()]
    if isinstance(data, list):
        if kind in ("list", "set", "frozenset") and isinstance(node.get("items_schema"), dict):
            return [(i, value, node["items_schema"]) for i, value in enumerate(data)]
        if kind == "tuple":
            items = node.get("items_schema", [])
            variadic = node.get("variadic_item_index")
            return [
                (i, value, items[i] if variadic is None or i < variadic else items[variadic])
                for i, value in enumerate(data)
                if i < len(items) or variadic is not None
            ]
    return []


def _not_a_number(
    node: dict[str, Any], data: Any, defs: dict[str, Any], loc: tuple[int | str, ...]
) -> tuple[tuple[int | str, ...], str, object] | None:
    """The first place where YAML gives a boolean, NaN or an infinity for a number: pydantic
    would take `true` for 1 and `.nan` for a float, and no figure of gpudecide can be either.

    The model's core schema (built with the class) is walked along the data only, so no
    JSON schema is generated (tens of ms a model)."""
    branches = _branches(node, defs)
    kinds = {_kind(b) for b in branches}
    numeric = bool(kinds & {"integer", "number"})
    if numeric and isinstance(data, bool) and "boolean" not in kinds:
        return loc, "expected a number, not {value}", data
    if numeric and isinstance(data, float) and not math.isfinite(data):
        return loc, "expected a finite number, not {value}", data
    for branch in branches:
        for key, value, sub in _children(branch, data):
            found = _not_a_number(sub, value, defs, (*loc, key))
            if found:
                return found
    return None


def _holds_suspect_number(data: Any) -> bool:
    """Whether any value in the parsed YAML is a boolean, NaN or an infinity: only then can
    `_not_a_number` find something, and only then is the model's schema walked."""
    pending = [data]
    while pending:
        item = pending.pop()
        if isinstance(item, bool) or (isinstance(item, float) and not math.isfinite(item)):
            return True
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def validate_model(data: Any, root: yaml.Node | None, path: Path, model: type[M]) -> M:
    """Validate parsed YAML against a model; the first problem is a one-line InputError.

    Before the model sees it, a boolean, NaN or infinity given for a number is refused for
    every model alike (pydantic would coerce `true` to 1)."""
    # here, not at import: reading a workspace's language for `--help` needs no pydantic
    from pydantic import ValidationError

    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError("must be a mapping of keys to values", path=path, line=1)
    found = None
    if _holds_suspect_number(data):
        found = _not_a_number(cast(dict[str, Any], model.__pydantic_core_schema__), data, {}, ())
    if found is not None:
        loc, message, value = found
        raise InputError(
            message,
            path=path,
            line=node_line(root, loc),
            field=".".join(_shown_key(p) for p in loc) or None,
            value=value,
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        field = ".".join(_shown_key(p) for p in loc) or None
        if first["type"] == "extra_forbidden":
            template, values = (
                "unknown key (misspelt? see the template's comments)",
                dict[str, Any](),
            )
        else:
            template, values = pydantic_template(first)
        raise InputError(
            template, path=path, line=node_line(root, loc), field=field, **values
        ) from None


def pydantic_template(error: Any) -> tuple[str, dict[str, Any]]:
    """A pydantic error as the template pydantic fills and its values (so the reader's
    language gets the template, the values as they are); a custom validator's ValueError is
    its own text; an error pydantic cannot name is its message as written."""
    from pydantic_core import PydanticKnownError

    ctx = dict(error.get("ctx") or {})
    if error.get("type") == "value_error":
        raised = ctx.get("error")
        if isinstance(raised, TemplateError):
            return raised.template, dict(raised.values)
        return str(raised if raised is not None else error["msg"]), {}
    try:
        template = PydanticKnownError(error["type"], ctx or None).message_template
        template.format(**ctx)
    except (KeyError, TypeError, ValueError, IndexError):
        return str(error["msg"]), {}
    reserved = {"path", "line", "field", "hint"}
    if reserved & set(ctx):
        return str(error["msg"]), {}
    return template, ctx


def load_yaml_model(path: Path, model: type[M], limit: int = MAX_YAML_BYTES) -> M:
    """Parse and validate a YAML file; the first problem becomes a one-line InputError."""
    data, root = load_yaml(path, limit)
    return validate_model(data, root, path, model)


def in_workspace(root: Path, rel: str, *, path: Path, field: str, line: int | None = None) -> Path:
    """A file the workspace's own inputs name (a document a score rests on, a contract):
    relative, and inside the workspace once links are followed. A path that leaves it
    (`/etc/...`, `../..`, a link out) is refused: the report would quote, and the decision
    hash, a file the team does not keep with its decision."""
    given = Path(rel)
    inside = root.resolve()
    target = (root / given).resolve()
    if given.is_absolute() or not target.is_relative_to(inside):
        raise InputError(
            "{rel!r} is outside the workspace",
            path=path,
            line=line,
            field=field,
            hint="keep the document in the workspace and give its path relative to it",
            rel=rel,
        )
    return root / given
