"""costs.yaml: the template documents every field and loads; bad input names file, line, field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpudecide import workspace
from gpudecide.cost import schema
from gpudecide.cost.demo import demo_costs_yaml
from gpudecide.errors import InputError

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
