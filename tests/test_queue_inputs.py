"""slo.yaml and the replay's settings by field class (issue 28): every number field refuses
what cannot be a number of its kind (a boolean, NaN, an infinity, a number written as text
that overflows, a value out of range) with one line naming the file, line and field; each
with a valid twin; and no value, however odd, gets past the loader as anything but a loaded
file or an input error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudecide import workspace
from gpudecide.errors import InputError
from gpudecide.jobs.log_command import LogCommand
from gpudecide.queue import slo as slo_mod
from gpudecide.queue.runs import replay_settings

from .conftest import examples

BASE: dict[str, Any] = {
    "slos": {
        "normal": {"threshold_minutes": 240, "allowed_violation_share": 0.1},
        "urgent": {
            "threshold_minutes": 30,
            "allowed_violation_share": 0.05,
            "selector": {"gpus": {"min": 1, "max": 2}, "priority": {"min": 0, "max": 10}},
        },
    }
}
# Every number field of slo.yaml, as a path into the file.
NUMBER_FIELDS = [
    ("slos", "urgent", "threshold_minutes"),
    ("slos", "urgent", "allowed_violation_share"),
    ("slos", "urgent", "selector", "gpus", "min"),
    ("slos", "urgent", "selector", "gpus", "max"),
    ("slos", "urgent", "selector", "priority", "min"),
    ("slos", "urgent", "selector", "priority", "max"),
]
IMPOSSIBLE = [True, float("nan"), float("inf"), float("-inf"), "1e400", "-1e999", "many"]


def _write(tmp_path: Path, field: tuple[str, ...], value: Any) -> Path:
    data = yaml.safe_load(yaml.safe_dump(BASE))
    node = data
    for key in field[:-1]:
        node = node[key]
    node[field[-1]] = value
    path = tmp_path / "slo.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("field", NUMBER_FIELDS, ids=".".join)
@pytest.mark.parametrize("value", IMPOSSIBLE, ids=repr)
def test_every_number_field_refuses_what_is_no_number(
    tmp_path: Path, field: tuple[str, ...], value: Any
) -> None:
    path = _write(tmp_path, field, value)
    with pytest.raises(InputError) as caught:
        slo_mod.load(path)
    error = caught.value
    assert error.path == str(path) and error.line is not None
    # the YAML reader refuses .nan and .inf on their line, before any field is known
    assert error.field in (".".join(field), None), error.one_line()
    assert "\n" not in error.one_line()


@pytest.mark.parametrize(
    "field, value",
    [
        (NUMBER_FIELDS[0], 0),
        (NUMBER_FIELDS[0], -5),
        (NUMBER_FIELDS[0], slo_mod.THRESHOLD_MAX_MINUTES + 1),
        (NUMBER_FIELDS[1], 1.5),
        (NUMBER_FIELDS[1], -0.1),
    ],
)
def test_out_of_range_numbers_name_their_field(
    tmp_path: Path, field: tuple[str, ...], value: float
) -> None:
    with pytest.raises(InputError) as caught:
        slo_mod.load(_write(tmp_path, field, value))
    assert caught.value.field == ".".join(field)


def test_the_valid_twins_load(tmp_path: Path) -> None:
    for field, value in [
        (NUMBER_FIELDS[0], slo_mod.THRESHOLD_MAX_MINUTES),
        (NUMBER_FIELDS[0], 0.5),
        (NUMBER_FIELDS[1], 0),
        (NUMBER_FIELDS[1], 1),
        (NUMBER_FIELDS[4], -4294967296),
        (NUMBER_FIELDS[5], 4294901684),
    ]:
        loaded = slo_mod.load(_write(tmp_path, field, value))
        assert set(loaded.slos) == {"normal", "urgent"}


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


@settings(max_examples=examples(60), deadline=None)
@given(field=st.sampled_from(NUMBER_FIELDS), value=_SCALARS)
def test_any_value_loads_or_is_one_input_error(
    tmp_path_factory: pytest.TempPathFactory, field: tuple[str, ...], value: Any
) -> None:
    path = _write(tmp_path_factory.mktemp("fuzz"), field, value)
    try:
        loaded = slo_mod.load(path)
    except InputError as exc:
        assert exc.path == str(path) and "\n" not in exc.one_line()
        return
    slo = loaded.slos["urgent"]
    assert 0 < slo.threshold_minutes <= slo_mod.THRESHOLD_MAX_MINUTES
    assert 0 <= slo.allowed_violation_share <= 1


@pytest.mark.parametrize("minutes", [float("inf"), 1e308, slo_mod.THRESHOLD_MAX_MINUTES * 2])
def test_a_checkpoint_interval_that_is_no_interval_is_refused(
    tmp_path: Path, minutes: float
) -> None:
    with pytest.raises(InputError) as caught:
        replay_settings(None, checkpoint_minutes=minutes)
    assert caught.value.field == "--checkpoint-minutes"
    # from gpudecide.yaml: the error names its line and key
    workspace.init(tmp_path / "ws")
    config = yaml.safe_load((tmp_path / "ws" / workspace.CONFIG_NAME).read_text())
    config["replay"]["checkpoint_minutes"] = "1e400"
    (tmp_path / "ws" / workspace.CONFIG_NAME).write_text(yaml.safe_dump(config))
    with pytest.raises(InputError) as caught:
        ws = LogCommand(workspace_dir=tmp_path / "ws").workspace()
        replay_settings(ws)
    assert caught.value.field == "replay.checkpoint_minutes"
    # the twin
    assert replay_settings(None, checkpoint_minutes=30).checkpoint_s == 1800
