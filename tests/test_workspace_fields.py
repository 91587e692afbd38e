"""gpudecide.yaml under attack, field class by field class (issue 28): every number field
of the template with values that cannot be, every path a score or an option points at, every
country code, the hybrid's contours. Each bad value is an InputError naming the field (exit 2
on the command line); nothing crashes and nothing is accepted that the decision cannot use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gpudecide import workspace
from gpudecide.cli import app
from gpudecide.errors import InputError

TEMPLATE = yaml.safe_load(
    (Path(workspace.__file__).parent / "templates" / "workspace" / "gpudecide.yaml").read_text()
)


def _numbers(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every number (not a boolean) in the template."""
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _numbers(v, (*path, k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _numbers(v, (*path, i))]
    return [path] if isinstance(node, int | float) and not isinstance(node, bool) else []


NUMBER_FIELDS = _numbers(TEMPLATE)
IMPOSSIBLE = [True, "many", -1, 0, 10**20, float("nan"), float("inf"), [], {"a": 1}]


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    import copy

    out = copy.deepcopy(doc)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def _load(root: Path, doc: Any) -> workspace.Workspace:
    root.mkdir(exist_ok=True)
    (root / workspace.CONFIG_NAME).write_text(yaml.safe_dump(doc, sort_keys=False))
    return workspace.load(root)


def test_the_template_has_number_fields_and_loads(tmp_path: Path) -> None:
    assert len(NUMBER_FIELDS) >= 10, NUMBER_FIELDS
    assert _load(tmp_path / "ws", TEMPLATE).config.options


@pytest.mark.parametrize("path", NUMBER_FIELDS, ids=lambda p: ".".join(map(str, p)))
def test_every_number_field_refuses_what_cannot_be(tmp_path: Path, path: tuple[Any, ...]) -> None:
    """A boolean, a word, a list or a mapping is refused; a number is refused or kept as a
    number the model allows (never a crash, never a boolean taken for 1)."""
    for i, value in enumerate(IMPOSSIBLE):
        doc = _set(TEMPLATE, path, value)
        try:
            ws = _load(tmp_path / f"ws{i}", doc)
        except InputError as exc:
            assert exc.path is not None and (exc.field or exc.line), exc
            continue
        node: Any = ws.config.model_dump()
        for key in path:
            node = node[key]
        assert not isinstance(value, bool | str | list | dict), (path, value, node)
        assert node == node and node not in (float("inf"),), (path, value)


@pytest.mark.parametrize(
    "rel", ["/etc/passwd", "../../etc/passwd", "docs/../../outside.txt", "link/escape.txt"]
)
def test_a_document_outside_the_workspace_is_refused(tmp_path: Path, rel: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "outside.txt").write_text("not the team's\n")
    (root / "link").symlink_to(tmp_path)
    (tmp_path / "escape.txt").write_text("x\n")
    score = {
        "option": TEMPLATE["options"][0]["id"],
        "criterion": "cost",
        "score": 4,
        "source": "document",
        "justification": "j",
        "document": rel,
    }
    doc = _set(TEMPLATE, ("matrix", "scores"), [score])
    with pytest.raises(InputError, match="outside the workspace") as err:
        _load(root, doc)
    assert err.value.field == "matrix.scores.0.document"
    contract = _set(TEMPLATE, ("options", 0, "derived_weights_document"), rel)
    with pytest.raises(InputError, match="outside the workspace") as err:
        _load(root, contract)
    assert err.value.field == "options.0.derived_weights_document"
    # Its twin: a document inside the workspace is taken.
    (root / "docs").mkdir()
    (root / "docs" / "c.txt").write_text("clause 9\n")
    assert _load(root, _set(contract, ("options", 0, "derived_weights_document"), "docs/c.txt"))


@pytest.mark.parametrize("code", ["kz", "xx", "XX", "ZZ", "KAZ", "", "K1"])
def test_a_country_code_that_is_no_country_is_refused(tmp_path: Path, code: str) -> None:
    site = _set(TEMPLATE, ("options", 0, "sites", 0, "country"), code)
    with pytest.raises(InputError) as err:
        _load(tmp_path / "a", site)
    assert err.value.field == "options.0.sites.0.country"
    residency = [{"asset": "pd", "countries": [code]}]
    with pytest.raises(InputError) as err:
        _load(tmp_path / "b", _set(TEMPLATE, ("matrix", "residency"), residency))
    assert err.value.field == "matrix.residency.0.countries.0"
    assert _load(
        tmp_path / "c",
        _set(TEMPLATE, ("matrix", "residency"), [{"asset": "pd", "countries": ["KZ", "DE"]}]),
    )


def _hybrid_index() -> int:
    return next(i for i, o in enumerate(TEMPLATE["options"]) if o["kind"] == "hybrid")


@pytest.mark.parametrize(
    "contours",
    [
        [],
        ["owned-pool"],
        ["owned-pool", "owned-pool"],
        ["owned-pool", "rented-pool", "managed-endpoint"],
    ],
)
def test_a_hybrid_has_exactly_two_contours(tmp_path: Path, contours: list[str]) -> None:
    doc = _set(TEMPLATE, ("options", _hybrid_index(), "contours"), contours)
    with pytest.raises(InputError, match="two different contours") as err:
        _load(tmp_path / "ws", doc)
    assert err.value.field == f"options.{_hybrid_index()}.contours"


def test_only_a_hybrid_has_contours(tmp_path: Path) -> None:
    doc = _set(TEMPLATE, ("options", 0, "contours"), ["rented-pool"])
    with pytest.raises(InputError, match="only a hybrid has contours"):
        _load(tmp_path / "ws", doc)


def test_criteria_and_scores(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        _load(tmp_path / "a", _set(TEMPLATE, ("matrix", "criteria"), []))
    assert err.value.field == "matrix.criteria"
    twice = {
        "option": "owned-pool",
        "criterion": "cost",
        "score": 3,
        "source": "override",
        "justification": "j",
    }
    with pytest.raises(InputError, match="scored on cost twice") as err:
        _load(tmp_path / "b", _set(TEMPLATE, ("matrix", "scores"), [twice, dict(twice)]))
    assert err.value.field == "matrix.scores.1"


def test_a_token_as_an_option_id_is_not_echoed(tmp_path: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    doc = _set(TEMPLATE, ("logs",), [{"path": "logs/x.txt", "option": token}])
    with pytest.raises(InputError) as err:
        _load(tmp_path / "ws", doc)
    assert token not in err.value.one_line() and token[:12] not in err.value.one_line()


def test_on_the_command_line_a_bad_field_is_one_line_exit_2(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    doc = _set(TEMPLATE, ("matrix", "criteria", 0, "weight"), True)
    (root / workspace.CONFIG_NAME).write_text(yaml.safe_dump(doc))
    run = CliRunner().invoke(app, ["assess", str(root)])
    assert run.exit_code == 2
    assert "matrix.criteria.0.weight" in run.output and "Traceback" not in run.output
