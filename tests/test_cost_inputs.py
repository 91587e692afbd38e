"""costs.yaml: the template documents every field and loads; bad input names file, line, field."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pytest
import yaml
from pydantic import BaseModel

from gpudecide import workspace
from gpudecide.cost import schema
from gpudecide.cost.demo import demo_costs_yaml
from gpudecide.errors import InputError
from gpudecide.inputs import parse_yaml, validate_model

from .conftest import run_cli
from .test_workspace import _fields  # the same walk over the schema as gpudecide.yaml's

TEMPLATE = workspace.template_files()[schema.COSTS_NAME]


def test_template_documents_every_field() -> None:
    lines = TEMPLATE.splitlines()
    fields = _fields(schema.CostsConfig)
    assert "owned.power.price_per_kwh.source" in fields  # the walk reaches nested prices
    for dotted in fields:
        key = dotted.split(".")[-1]
        idx = next((i for i, ln in enumerate(lines) if re.match(rf"\s*(- )?{key}:", ln)), None)
        assert idx is not None, f"{dotted} missing from the template"
        assert lines[idx - 1].lstrip().startswith("#"), f"{dotted} has no comment above it"


def test_template_is_written_by_init_and_loads(tmp_path: Path) -> None:
    written = workspace.init(tmp_path / "ws")
    assert tmp_path / "ws" / schema.COSTS_NAME in written
    cfg = schema.load(tmp_path / "ws" / schema.COSTS_NAME)
    assert cfg.currency == "USD" and [o.id for o in cfg.options()] == [
        "owned-pool",
        "rented-pool",
        "managed-endpoint",
        "hybrid-pool-bursts",
    ]
    assert all("placeholder" in p.source for _, p in schema.iter_prices(cfg))


def test_demo_costs_load(tmp_path: Path) -> None:
    path = tmp_path / "costs.yaml"
    path.write_text(demo_costs_yaml())
    cfg = schema.load(path)
    assert cfg.currency == "KZT"
    types = {
        "owned": [o.id for o in cfg.owned],
        "rented": [o.id for o in cfg.rented],
        "managed": [o.id for o in cfg.managed],
        "hybrid": [o.id for o in cfg.hybrid],
    }
    assert types == {
        "owned": ["owned-8xh100"],
        "rented": ["rented-8gpu", "kz-rented-2gpu"],
        "managed": ["managed-ft", "kz-local"],
        "hybrid": ["hybrid-kz"],
    }
    assert cfg.owned[0].pool_gpus == 8 and "Kazakhstan" in cfg.managed[1].site
    assert all(p.source and "placeholder" not in p.source for _, p in schema.iter_prices(cfg))


def _edit(text: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


BAD = [
    pytest.param(
        [("amount: 280000", "amount: -5")],
        "owned.0.capex.0.unit_price.amount",
        "greater than or equal to 0",
        "amount",
        id="negative-price",
    ),
    pytest.param(
        [("          currency: USD", "          currency: EUR")],
        "owned.0.capex.0.unit_price.currency",
        "amount in EUR but the file's currency is USD",
        "currency",
        id="currency-mix",
    ),
    pytest.param(
        [("currency: USD\n", "currency: dollars\n")],
        "currency",
        "should match pattern",
        "currency",
        id="not-a-currency-code",
    ),
    pytest.param(
        [
            ("hours_per_month: 60\n", "hours_per_month: 0\n"),
            ("hours_per_month: 10\n", "hours_per_month: 0\n"),
        ],
        "owned.0.labour",
        "no engineer hours",
        "labour",
        id="zero-labour",
    ),
    pytest.param(
        [("commitment_months: 24", "commitment_months: 48")],
        "owned.0.colocation.commitment_months",
        "longer than the write-off period of 36 months",
        "commitment_months",
        id="commitment-longer-than-write-off",
    ),
    pytest.param(
        [("    gpus_per_server: 8\n", "    gpus_per_server: 8\n    gpu_per_server: 8\n")],
        "owned.0.gpu_per_server",
        "unknown key",
        "gpu_per_server",
        id="unknown-key",
    ),
    pytest.param(
        [("price_per_gpu_month: null", "price_per_gpu_month: {amount: 1500, source: q}")],
        "rented.0.price_per_gpu_hour",
        "exactly one of price_per_gpu_hour or price_per_gpu_month",
        "price_per_gpu_hour",
        id="two-rented-prices",
    ),
    pytest.param(
        [("base: rented-pool", "base: managed-endpoint")],
        "hybrid.0.base",
        "not the id of an owned or rented option",
        "base",
        id="hybrid-base-is-managed",
    ),
    pytest.param(
        [("  - id: rented-pool", "  - id: owned-pool")],
        "rented.0.id",
        "used twice",
        "id",
        id="duplicate-id",
    ),
    pytest.param(
        [("pue: 1.4", "pue: 0.7")],
        "owned.0.power.pue",
        "greater than or equal to 1",
        "pue",
        id="pue-below-one",
    ),
    pytest.param(
        [('consequence: "trainings queue', 'consequence: ""\n      # "trainings queue')],
        "owned.0.waiting.consequence",
        "at least 1 character",
        "consequence",
        id="empty-waiting-consequence",
    ),
    pytest.param(
        [("      rule: over_capacity", "      rule: kinds")],
        "hybrid.0.overflow_rule.kinds",
        "needs the job kinds",
        "kinds",
        id="kinds-rule-without-kinds",
    ),
    pytest.param(
        [("retention_days: 30", "retention_days: 30.5")],
        "managed.0.retention_days",
        "integer",
        "retention_days",
        id="fractional-days",
    ),
]


@pytest.mark.parametrize(("edits", "field", "words", "key"), BAD)
def test_bad_costs_name_line_and_field(
    tmp_path: Path, edits: list[tuple[str, str]], field: str, words: str, key: str
) -> None:
    path = tmp_path / "costs.yaml"
    path.write_text(_edit(TEMPLATE, *edits))
    with pytest.raises(InputError) as exc:
        schema.load(path)
    err = exc.value
    assert err.field == field and words in err.message, err.one_line()
    assert err.path == str(path)
    assert err.line is not None
    # The line of the field, or, for a block list or mapping, the first line of its value.
    above = path.read_text().splitlines()[max(0, err.line - 4) : err.line]
    near = [ln for ln in above if not ln.lstrip().startswith("#")][-2:]
    assert any(re.match(rf"\s*(- )?{key}:", ln) for ln in near), (err.line, near)


def test_zero_labour_says_why(tmp_path: Path) -> None:
    path = tmp_path / "costs.yaml"
    path.write_text(
        _edit(
            TEMPLATE,
            ("hours_per_month: 25\n", "hours_per_month: 0\n"),
            ("hours_per_month: 8\n", "hours_per_month: 0\n"),
        )
    )
    with pytest.raises(InputError) as exc:
        schema.load(path)
    line = exc.value.one_line()
    assert "field 'managed.0.labour'" in line and "SPEC C6" in line
    assert "image, access rights" in line  # what managed labour is


def _rented_without_labour(standalone: bool) -> str:
    """The template with the rented pool's labour block removed and `standalone` set."""
    text = _edit(
        TEMPLATE,
        (
            "    standalone: true\n    # GPUs in the pool.",
            f"    standalone: {str(standalone).lower()}\n    # GPUs in the pool.",
        ),
    )
    cut, n = re.subn(
        r"(  - id: rented-pool.*?)    labour:.*?(\n  - id: |\n# Managed)",
        r"\1\2",
        text,
        count=1,
        flags=re.S,
    )
    assert n == 1 and "labour:" in text[text.index("  - id: rented-pool") :]
    return cut


def test_building_block_needs_no_labour_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "costs.yaml"
    path.write_text(_rented_without_labour(standalone=False))
    cfg = schema.load(path)
    assert cfg.rented[0].standalone is False and cfg.rented[0].labour == []
    assert cfg.rented[0].waiting is None


def test_standalone_option_without_labour_is_refused(tmp_path: Path) -> None:
    # Negative case of the rule above: the same file with the pool standing alone.
    path = tmp_path / "costs.yaml"
    path.write_text(_rented_without_labour(standalone=True))
    with pytest.raises(InputError) as exc:
        schema.load(path)
    assert exc.value.field is not None and exc.value.field.startswith("rented.0")
    assert "labour" in exc.value.one_line()


def test_yaml_syntax_error_has_a_line(tmp_path: Path) -> None:
    path = tmp_path / "costs.yaml"
    path.write_text(TEMPLATE + "\nowned: [unclosed\n")
    with pytest.raises(InputError) as exc:
        schema.load(path)
    assert exc.value.line is not None and "YAML" in exc.value.message


# --- every number field, by class (issue 21: labour 0 refused; every other impossible value
# too, with file, line and field) ---

_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


def _number_nodes(node: yaml.Node, loc: tuple[int | str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """Every number the YAML text holds, as (dotted field, its scalar node)."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield from _number_nodes(value, (*loc, key.value))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yield from _number_nodes(item, (*loc, i))
    elif isinstance(node, yaml.ScalarNode) and node.tag in _NUMBER_TAGS:
        yield ".".join(str(p) for p in loc), node


def _generic(dotted: str) -> str:
    """A field without its list indexes ("owned.0.capex.1.quantity" -> "owned.capex.quantity")."""
    return ".".join(p for p in dotted.split(".") if not p.isdigit())


def _types(ann: Any) -> Iterator[Any]:
    """The types an annotation admits, Annotated and unions unwrapped."""
    if get_origin(ann) is Annotated:
        yield from _types(get_args(ann)[0])
    elif get_origin(ann) in (Union, UnionType):
        for arg in get_args(ann):
            yield from _types(arg)
    else:
        yield ann


def _schema_numbers(model: type[BaseModel], prefix: str = "") -> dict[str, str]:
    """Every number field of the schema: its generic dotted path -> "Model.field" (the walk
    of `_fields`, numbers only)."""
    out: dict[str, str] = {}
    for name, info in model.model_fields.items():
        types = list(_types(info.annotation))
        for t in types:
            literal_int = get_origin(t) is Literal and all(isinstance(a, int) for a in get_args(t))
            if t in (int, Decimal) or literal_int:
                out[prefix + name] = f"{model.__name__}.{name}"
            elif get_origin(t) is list:
                types += list(_types(get_args(t)[0]))
            elif isinstance(t, type) and issubclass(t, BaseModel):
                out |= _schema_numbers(t, prefix + name + ".")
    return out


# The template with its empty (null) number fields given, so that every number field of
# the schema is in one of the two texts (the rented pool priced by the month here).
FILLED = _edit(
    TEMPLATE,
    ("write_off_months: null", "write_off_months: 24"),
    ("minimum_monthly_spend: null", "minimum_monthly_spend: {amount: 100, source: q}"),
    ("ingest_price_per_gb: null", "ingest_price_per_gb: {amount: 0.01, source: q}"),
    ("assumed_monthly_cost: null", "assumed_monthly_cost: {amount: 100, source: q}"),
    ("price_per_gpu_hour: {amount: 2.2,", "price_per_gpu_hour: null\n    x: {amount: 2.2,"),
    ("price_per_gpu_month: null", "price_per_gpu_month: {amount: 1500, source: q}"),
)
FILLED = re.sub(r"\n    x: \{amount: 2\.2,[^\n]*", "", FILLED, count=1)
NUMBERS = [
    (text, dotted, node)
    for text in (TEMPLATE, FILLED)
    for dotted, node in _number_nodes(yaml.compose(text))
]
# Where zero is impossible: a pool of no servers or GPUs, nothing bought, a month written
# off over nothing, a busy server drawing nothing, cooling below 1, a month outside 672-744
# hours, engineer time for free (C6), another schema version.
ZERO_IMPOSSIBLE = re.compile(
    r"^(version|hours_per_month|owned\.\d+\.(servers|gpus_per_server|write_off_months)"
    r"|owned\.\d+\.capex\.\d+\.(quantity|write_off_months)|owned\.\d+\.power\.(kw_per_server_busy|pue)"
    r"|rented\.\d+\.gpus|\w+\.\d+\.labour\.\d+\.rate_per_hour\.amount)$"
)


def test_the_walk_reaches_every_number_field_of_the_schema() -> None:
    """Each number field of every part of the schema is set in one of the two texts (a
    price's amount at least once, whichever option it is of)."""
    fields = _schema_numbers(schema.CostsConfig)
    reached = {fields[_generic(dotted)] for _text, dotted, _node in NUMBERS}
    assert set(fields.values()) == reached


def _load(tmp_path: Path, text: str) -> schema.CostsConfig:
    path = tmp_path / "costs.yaml"
    path.write_text(text)
    return schema.load(path)


def _check(tmp_path: Path, text: str, dotted: str, value: object) -> schema.CostsConfig:
    """costs.yaml `text` with the number at `dotted` replaced by `value`, validated as
    `schema.load` validates it: the parsed data changed in place of re-reading YAML for
    every case (the YAML reader has its own tests), lines from the text's own nodes."""
    path = tmp_path / f"costs-{hash(text) & 0xFFFF}.yaml"
    if not path.exists():
        path.write_text(text)
    data, root = PARSED[text]
    changed = copy.deepcopy(data)
    *parents, last = [int(p) if p.isdigit() else p for p in dotted.split(".")]
    node = changed
    for part in parents:
        node = node[part]
    node[last] = value
    return schema.validate(validate_model(changed, root, path, schema.CostsConfig), path)


PARSED = {text: parse_yaml(text, schema.COSTS_NAME) for text in (TEMPLATE, FILLED)}


@pytest.mark.parametrize(
    "value",
    [-1, True, "abc", 10**13, float("nan"), float("inf"), "1,5"],
    ids=["negative", "boolean", "text", "huge", "nan", "infinity", "comma"],
)
def test_every_number_field_refuses_an_impossible_value(tmp_path: Path, value: object) -> None:
    """Each number of costs.yaml, set to a value no figure can be: refused, naming the file,
    the line and the field."""
    for text, dotted, node in NUMBERS:
        with pytest.raises(InputError) as exc:
            _check(tmp_path, text, dotted, value)
        err = exc.value
        assert (err.field, err.line) == (dotted, node.start_mark.line + 1), (dotted, err.one_line())
        assert err.path is not None and err.path.startswith(str(tmp_path))


def test_zero_is_refused_exactly_where_it_is_impossible(tmp_path: Path) -> None:
    """Zero, field by field: refused where no figure can be zero (ZERO_IMPOSSIBLE), accepted
    everywhere else (a free egress, no notice, an idle draw of nothing)."""
    refused = []
    for text, dotted, node in NUMBERS:
        try:
            _check(tmp_path, text, dotted, 0)
        except InputError as err:
            assert (err.field, err.line) == (dotted, node.start_mark.line + 1), err.one_line()
            refused.append(dotted)
    assert refused and all(ZERO_IMPOSSIBLE.match(d) for d in refused), refused
    assert refused == [d for _t, d, _n in NUMBERS if ZERO_IMPOSSIBLE.match(d)]


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_the_yaml_reader_refuses_what_is_no_number_with_its_line(
    tmp_path: Path, value: str
) -> None:
    """The same from the file: the reader refuses NaN and infinities, with the line."""
    text, _dotted, node = NUMBERS[3]
    with pytest.raises(InputError) as exc:
        _load(tmp_path, _with(text, node, value))
    assert exc.value.line == node.start_mark.line + 1 and "finite" in exc.value.message


def _with(text: str, node: Any, value: str) -> str:
    return text[: node.start_mark.index] + value + text[node.end_mark.index :]


def test_an_idle_server_draws_at_most_what_a_busy_one_does(tmp_path: Path) -> None:
    text = _edit(TEMPLATE, ("kw_per_server_idle: 2.8", "kw_per_server_idle: 10.3"))
    with pytest.raises(InputError) as exc:
        _load(tmp_path, text)
    assert exc.value.field == "owned.0.power.kw_per_server_idle"
    assert "an idle server draws 10.3 kW, more than a busy one (10.2 kW)" in exc.value.message
    # The twin: the same draw idle and busy (a server that never idles down) is a figure.
    assert _load(tmp_path, _edit(TEMPLATE, ("kw_per_server_idle: 2.8", "kw_per_server_idle: 10.2")))


def test_a_role_of_several_people_may_work_more_than_a_month_of_hours(tmp_path: Path) -> None:
    """Five platform engineers at 160 hours are one role of 800 hours (not a typo)."""
    cfg = _load(tmp_path, _edit(TEMPLATE, ("hours_per_month: 60\n", "hours_per_month: 800\n")))
    assert cfg.owned[0].labour[0].hours_per_month == 800


@pytest.mark.parametrize(
    ("old", "new", "field", "words"),
    [
        (
            "amount: 60, source",
            "amount: 0, source",
            "owned.0.labour.0.rate_per_hour.amount",
            "'platform engineer' works 60 hours a month at a rate of 0",
        ),
        (
            "kw_per_server_busy: 10.2",
            "kw_per_server_busy: true",
            "owned.0.power.kw_per_server_busy",
            "number",
        ),
        ("gpus: 8\n", "gpus: 8.5\n", "rented.0.gpus", "integer"),
        (
            "    notice_days: 30",
            "    notice_days: -30",
            "managed.0.notice_days",
            "greater than or equal",
        ),
    ],
)
def test_cost_refuses_them_with_exit_2(
    tmp_path: Path, old: str, new: str, field: str, words: str
) -> None:
    """Through the command: one line with file:line and field on stderr, exit 2, no
    traceback, no record written."""
    ws = tmp_path / "ws"
    workspace.init(ws)
    costs = ws / schema.COSTS_NAME
    text = _edit(costs.read_text(), (old, new))
    costs.write_text(text)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if new.strip() in ln)
    res = run_cli("cost", str(costs), "--profile", str(tmp_path / "none.json"), cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert f"costs.yaml:{line}: field '{field}'" in res.stderr and words in res.stderr
    assert "Traceback" not in res.stderr and not (tmp_path / "evidence").exists()
