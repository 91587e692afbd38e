"""The template workspace written for the team's own options (issue 27): each option is
named once, on the command line, and every template file that names options is written
for those ids, so that no id is ever retyped by hand.

The templates carry one worked example per option kind (`owned-pool`, `rented-pool`,
`managed-endpoint`, `hybrid-pool-bursts`). For the team's options, each file is read with
its comments (ruamel.yaml's round trip) and rewritten:

- a list item that is an option's entry (`id:` or `option:` one of the examples) becomes
  one copy per team option of that kind, renamed; an example kind the team has none of is
  dropped;
- a list of option ids (`contours`, a RACI row's `options`) names the team's options of the
  examples' kinds; a RACI assignment left with no option is dropped (it applied to a kind
  the team does not compare);
- a single id (`option:` of the export test and the drills, a hybrid's `base` and
  `overflow`, its contours) names the team's first option of the same kind, else of the
  nearest kind (owned <-> rented), else the first option.

`add_option` adds one option to an existing workspace the same way: the kind's example
entries appended where the template has them, and its id added to the lists that already
name an option of its kind.
"""

from __future__ import annotations

import copy
import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from gpudecide.errors import InputError
from gpudecide.fsutil import atomic_write_text, read_regular
from gpudecide.options import OPTION_ID_PATTERN, OptionKind

__all__ = [
    "EXAMPLES",
    "KINDS",
    "Added",
    "OptionSpec",
    "add_option",
    "for_options",
    "parse_option",
]

KINDS: tuple[str, ...] = get_args(OptionKind)
# The template's worked example of each kind.
EXAMPLES: dict[str, str] = {
    "owned": "owned-pool",
    "rented": "rented-pool",
    "managed": "managed-endpoint",
    "hybrid": "hybrid-pool-bursts",
}
_KIND_OF = {v: k for k, v in EXAMPLES.items()}
# Where a single id of a kind the team lacks falls back to (a dedicated pool stands in for
# the other dedicated kind).
_NEAREST = {"owned": ("rented",), "rented": ("owned",), "managed": (), "hybrid": ()}
_ID = re.compile(OPTION_ID_PATTERN)
_MAX_YAML = 4 << 20  # a workspace file is a few KB; anything near this is not one


@dataclass(frozen=True)
class OptionSpec:
    """One option the team compares, as `--option ID:KIND` names it."""

    id: str
    kind: str


def parse_option(text: str) -> OptionSpec:
    """`ID:KIND` (kind owned | rented | managed | hybrid) as an option, or exit 2 saying why."""
    ident, sep, kind = text.rpartition(":")
    if not sep or not ident:
        raise InputError(
            "{text!r} is not ID:KIND",
            text=text,
            field="--option",
            hint="name each option as ID:KIND, e.g. --option kz-cloud:managed",
        )
    if kind not in KINDS:
        raise InputError(
            "{kind!r} is not an option kind",
            kind=kind,
            field="--option",
            hint="a kind is one of owned, rented, managed, hybrid",
        )
    if not _ID.match(ident):
        raise InputError(
            "{ident!r} is not an option id",
            ident=ident,
            field="--option",
            hint="an id starts with a letter or digit and holds letters, digits, '.', '_', '-'",
        )
    return OptionSpec(ident, kind)


def _check(options: list[OptionSpec]) -> None:
    seen: set[str] = set()
    for o in options:
        if o.id in seen:
            raise InputError(
                "option {id!r} is named twice",
                id=o.id,
                field="--option",
                hint="name each option once",
            )
        seen.add(o.id)
    kinds = {o.kind for o in options}
    if "hybrid" in kinds and not (kinds & {"owned", "rented"} and "managed" in kinds):
        raise InputError(
            "a hybrid option needs a dedicated (owned or rented) and a managed option",
            field="--option",
            hint="name its two contours too, e.g. --option pool:rented --option cloud:managed",
        )


def _yaml() -> Any:
    from ruamel.yaml import YAML

    y = YAML()  # round trip: comments and key order are kept
    y.width = 100
    y.indent(mapping=2, sequence=4, offset=2)
    y.preserve_quotes = True
    return y


def _load(text: str) -> Any:
    return _yaml().load(text)


def _dump(doc: Any) -> str:
    buf = io.StringIO()
    _yaml().dump(doc, buf)
    return buf.getvalue()


@dataclass
class _Plan:
    """The team's ids per example id."""

    by_kind: dict[str, list[str]]
    first: str

    def ids_for(self, example: str) -> list[str]:
        return list(self.by_kind.get(_KIND_OF[example], []))

    def one_for(self, example: str) -> str:
        kind = _KIND_OF[example]
        for k in (kind, *_NEAREST[kind]):
            if self.by_kind.get(k):
                return self.by_kind[k][0]
        return self.first


def _entry_id(item: object) -> tuple[str, str] | None:
    """(key, example id) when `item` is an option's entry of the template."""
    if isinstance(item, Mapping):
        for key in ("id", "option"):
            value = item.get(key)
            if isinstance(value, str) and value in _KIND_OF:
                return key, value
    return None


def _rewrite(node: Any, plan: _Plan) -> Any:
    """`node` with every example id replaced by the team's ids (see the module doc)."""
    if isinstance(node, list):
        out: list[Any] = []
        for item in node:
            entry = _entry_id(item)
            if entry is not None:
                key, example = entry
                for ident in plan.ids_for(example):
                    twin = copy.deepcopy(item)
                    twin[key] = ident
                    out.append(_rewrite(twin, plan))
            elif isinstance(item, str) and item in _KIND_OF:
                out += [i for i in plan.ids_for(item) if i not in out]
            else:
                kept = _rewrite(item, plan)
                if (
                    isinstance(kept, Mapping)
                    and kept.get("options") == []
                    and isinstance(item, Mapping)
                    and item.get("options")
                ):
                    continue  # an assignment of kinds the team does not compare
                out.append(kept)
        node[:] = out
        return node
    if isinstance(node, Mapping):
        for key in list(node):
            value = node[key]
            if isinstance(value, str) and value in _KIND_OF:
                node[key] = plan.one_for(value)  # type: ignore[index]
            elif key == "contours" and isinstance(value, list):
                node[key] = _contours(value, plan)  # type: ignore[index]
            else:
                node[key] = _rewrite(value, plan)  # type: ignore[index]
            if isinstance(value, list) and not value:
                _drop_leading_comment(node, key)
        return node
    return node


def _drop_leading_comment(parent: Any, key: Any) -> None:
    """A list emptied of its example: the comment that described its first item goes with
    it (ruamel would write it between the key and `[]`, which is not YAML)."""
    items = getattr(getattr(parent, "ca", None), "items", {})
    if key in items and len(items[key]) > 3:
        items[key][3] = None
    comment = getattr(getattr(parent[key], "ca", None), "comment", None)
    if comment:
        parent[key].ca.comment = None


def _contours(value: list[Any], plan: _Plan) -> list[Any]:
    """A hybrid's contours: one option per example contour, each of its kind or nearest."""
    out: list[Any] = []
    for item in value:
        ident = plan.one_for(item) if isinstance(item, str) and item in _KIND_OF else item
        if ident not in out:
            out.append(ident)
    value[:] = out
    return value


def for_options(files: Mapping[str, str], options: list[OptionSpec]) -> dict[str, str]:
    """The template files rewritten for `options` (files that name no option unchanged)."""
    _check(options)
    by_kind: dict[str, list[str]] = {}
    for o in options:
        by_kind.setdefault(o.kind, []).append(o.id)
    plan = _Plan(by_kind, options[0].id)
    out = dict(files)
    for rel, text in files.items():
        if not rel.endswith(".yaml") or not any(e in text for e in _KIND_OF):
            continue
        doc = _load(text)
        if not isinstance(doc, (Mapping, list)):
            continue  # only comments (hybrid.yaml): its examples stay examples
        out[rel] = _dump(_rewrite(doc, plan))
    return out


@dataclass
class Added:
    """What `add_option` changed, file by file, and what the team still has to do."""

    changed: list[Path] = field(default_factory=list)
    todo: list[str] = field(default_factory=list)


def _kinds_of(doc: Any) -> dict[str, str]:
    options = doc.get("options") if isinstance(doc, Mapping) else None
    out: dict[str, str] = {}
    for o in options or []:
        if isinstance(o, Mapping) and isinstance(o.get("id"), str):
            out[str(o["id"])] = str(o.get("kind", ""))
    return out


def _template_entries(template: Any, example: str) -> Iterable[tuple[tuple[Any, ...], Any]]:
    """(path of the list, entry) of each option entry of `example` in a template document."""

    def walk(node: Any, path: tuple[Any, ...]) -> Iterable[tuple[tuple[Any, ...], Any]]:
        if isinstance(node, list):
            for item in node:
                entry = _entry_id(item)
                if entry is not None and entry[1] == example:
                    yield path, item
                else:
                    yield from walk(item, path)
        elif isinstance(node, Mapping):
            for key, value in node.items():
                yield from walk(value, (*path, key))

    yield from walk(template, ())


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        if not isinstance(doc, Mapping) or key not in doc:
            return None
        doc = doc[key]
    return doc


def _id_lists(node: Any, known: set[str]) -> Iterable[list[Any]]:
    """Every list of option ids (scalars only, at least one a known option)."""
    if isinstance(node, list):
        if node and all(isinstance(i, str) for i in node) and set(node) & known:
            yield node
        else:
            for item in node:
                yield from _id_lists(item, known)
    elif isinstance(node, Mapping):
        for value in node.values():
            yield from _id_lists(value, known)


def add_option(root: Path, spec: OptionSpec, templates: Mapping[str, str]) -> Added:
    """Add `spec` to the workspace at `root`: its entry in gpudecide.yaml and the kind's
    example entries in every file that has them, its id beside those of its kind."""
    config = root / "gpudecide.yaml"
    texts = {
        rel: read_regular(root / rel, _MAX_YAML).decode("utf-8")
        for rel in templates
        if rel.endswith(".yaml") and (root / rel).is_file()
    }
    if "gpudecide.yaml" not in texts:
        raise InputError(
            "no gpudecide.yaml here",
            path=root,
            hint="run it in a workspace (gpudecide init DIR) or pass --workspace",
        )
    kinds = _kinds_of(_load(texts["gpudecide.yaml"]))
    if spec.id in kinds:
        raise InputError(
            "option {id!r} is declared already",
            id=spec.id,
            path=config,
            field="options",
            hint="choose another id, or edit its entry in gpudecide.yaml",
        )
    if spec.kind == "hybrid":
        raise InputError(
            "a hybrid is added by hand: its two contours are options of the workspace",
            field="--kind",
            hint="copy the hybrid example of `gpudecide init` into gpudecide.yaml and costs.yaml",
        )
    same = {i for i, k in kinds.items() if k == spec.kind}
    example = EXAMPLES[spec.kind]
    plan = _Plan({spec.kind: [spec.id]}, spec.id)
    added = Added()
    new_texts: dict[str, str] = {}
    for rel, text in texts.items():
        if not rel.endswith(".yaml"):
            continue
        doc = _load(text)
        if not isinstance(doc, Mapping):
            continue
        template = _load(templates[rel])
        touched = False
        for path, entry in _template_entries(template, example):
            target = _at(doc, path)
            if not isinstance(target, list):
                continue
            twin = _rewrite([copy.deepcopy(entry)], plan)
            target.extend(twin)
            touched = True
        for ids in _id_lists(doc, set(kinds)):
            if set(ids) & same and spec.id not in ids:
                ids.append(spec.id)
                touched = True
        if touched:
            new_texts[rel] = _dump(doc)
        elif rel == "raci.yaml" and not same:
            added.todo.append(rel)
    for rel, text in sorted(new_texts.items()):
        atomic_write_text(root / rel, text)
        added.changed.append(root / rel)
    return added
