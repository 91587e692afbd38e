"""Fuzzing every reader with the shapes of issue 14: huge and non-finite numbers, deep
nesting, aliases, duplicate keys, byte-order marks and non-regular files. The property: a
reader returns data that holds no NaN/Infinity and no nesting over the bound, or raises one
InputError naming the file; nothing else escapes (no RecursionError, OverflowError, ...)."""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpudecide import inputs, jsonio
from gpudecide.errors import InputError
from gpudecide.jobs import kubernetes, managed
from gpudecide.jobs.tabular import read_tabular

from .conftest import examples

SETTINGS = settings(
    max_examples=examples(int(os.environ.get("ATTACK_EXAMPLES", "80"))),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

NUMBERS = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["1e308", "1e400", "-1e400", "9" * 400, "NaN", "Infinity", "-Infinity"]),
)
KEYS = st.sampled_from(["job_id", "gpu_count", "state", "start", "end", "kind", "a", "GPU_COUNT"])
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=30))


def _json_text(value: Any) -> str:
    """JSON text for a generated value; number strings go in raw, as an attacker writes them."""
    if isinstance(value, str) and value in ("1e308", "1e400", "-1e400", "NaN", "Infinity"):
        return value
    if isinstance(value, str) and value.startswith("-Inf"):
        return value
    if isinstance(value, str) and value.isdigit():
        return value
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("NaN" if value != value else "Infinity")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_json_text(v)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_json_text(v) for v in value) + "]"
    return json.dumps(value)


class _Pairs(list):  # type: ignore[type-arg]
    """A JSON object as written (keys may repeat)."""


# Objects are lists of pairs so duplicate keys can be generated.
DOCS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(st.tuples(KEYS, inner), max_size=5).map(_Pairs),
    ),
    max_leaves=25,
)


def _render(value: Any) -> str:
    if isinstance(value, _Pairs):
        return "{" + ", ".join(f"{json.dumps(k)}: {_render(v)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_render(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{}"
    return _json_text(value)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def _write(data: bytes, suffix: str) -> Path:
    fd, name = tempfile.mkstemp(suffix=suffix, dir=_DIR)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return Path(name)


_DIR = tempfile.mkdtemp(prefix="attack-fuzz-")


def _wrap(text: str, deep: int, bom: bool) -> bytes:
    text = "[" * deep + text + "]" * deep
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass")


@SETTINGS
@given(DOCS, st.integers(0, 200), st.booleans())
def test_json_reader(doc: Any, deep: int, bom: bool) -> None:
    path = _write(_wrap(_render(doc), deep, bom), ".json")
    try:
        value = jsonio.read_json(path)
    except InputError as exc:
        assert exc.path == str(path) and "\n" not in exc.one_line()
        return
    assert _finite(value) and _depth(value) <= jsonio.MAX_DEPTH


@SETTINGS
@given(DOCS, st.integers(0, 100))
def test_job_json_readers(doc: Any, deep: int) -> None:
    body = _render(doc)
    for shaped in (
        '{"kind": "PodList", "items": [' + body + "]}",
        '{"kind": "EventList", "items": [' + body + "]}",
        '[{"TrainingJobName": "x", "ResourceConfig": ' + body + "}]",
        '{"object": "fine_tuning.job", "id": "j", "status": "succeeded", "created_at": '
        + body
        + "}",
    ):
        path = _write(_wrap(shaped, deep if deep > 60 else 0, False), ".json")
        try:
            if '"PodList"' in shaped:
                kubernetes.read_kubernetes(path, {})
            elif '"EventList"' in shaped:
                kubernetes.index_events(path)
            elif "TrainingJobName" in shaped:
                managed.read_sagemaker(path)
            else:
                managed.read_openai(path, {})
        except InputError as exc:
            assert exc.path == str(path)


YAML_ATTACKS = st.sampled_from(
    [
        "a: &x 1\nb: *x\n",
        "a: [*x]\n",
        "a: 1\na: 2\n",
        "a: .inf\n",
        "a: -.inf\n",
        "a: .nan\n",
        "a: " + "9" * 400 + "\n",
        "a: 1e400\n",
        "<<: {a: 1}\n",
        "? [a, b]\n: 1\n",
        "a: !!python/object:os.system x\n",
        "a: !!binary aGVsbG8=\n",
        "\ufeffa: 1\n",
        "a:\n" + "".join("  " * i + "- \n" for i in range(1, 120)),
    ]
)


@SETTINGS
@given(st.one_of(YAML_ATTACKS, st.text(max_size=200)), st.integers(0, 200))
def test_yaml_reader(text: str, deep: int) -> None:
    path = _write(
        ("[" * deep + "]" * deep + "\n" if deep else "").encode()
        + text.encode("utf-8", "surrogatepass"),
        ".yaml",
    )
    try:
        value, _root = inputs.load_yaml(path)
    except InputError as exc:
        assert exc.path == str(path) and "\n" not in exc.one_line()
        return
    assert _finite(value) and _depth(value) <= inputs.MAX_DEPTH


ROWS = st.lists(st.tuples(KEYS, SCALARS), max_size=8).map(_Pairs)


@SETTINGS
@given(st.lists(ROWS, min_size=1, max_size=5), st.booleans(), st.booleans())
def test_tabular_readers(rows: list[Any], bom: bool, skip: bool) -> None:
    jsonl = "".join(_render(r) + "\n" for r in rows)
    header = sorted({k for r in rows for k, _ in r} | {"job_id", "gpu_count", "state"})
    csv_text = (
        ",".join(header)
        + "\n"
        + "".join(
            ",".join(str(dict(r).get(h, "")).replace(",", " ").replace("\n", " ") for h in header)
            + "\n"
            for r in rows
        )
    )
    for text, fmt in ((jsonl, "jsonl"), (csv_text, "csv")):
        path = _write(
            (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass"), "." + fmt
        )
        try:
            result = read_tabular(path, fmt=fmt, skip_bad_rows=skip)
        except InputError as exc:
            assert exc.path == str(path)
            continue
        for row in result.table.to_pylist():
            assert row["gpu_count"] is None or 0 <= row["gpu_count"] <= 100_000
            if row["start"] and row["end"]:
                assert row["start"] <= row["end"]
        for bad in result.bad_rows:
            assert bad.line is not None and bad.reason


def test_every_reader_refuses_non_regular_files(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    readers = [
        lambda p: jsonio.read_json(p),
        lambda p: inputs.load_yaml(p),
        lambda p: read_tabular(p, fmt="csv"),
        lambda p: read_tabular(p, fmt="jsonl"),
        lambda p: kubernetes.read_kubernetes(p, {}),
        lambda p: managed.read_sagemaker(p),
    ]
    for target, kind in (
        (fifo, "FIFO"),
        (Path("/dev/zero"), "character device"),
        (tmp_path, "directory"),
    ):
        for read in readers:
            try:
                read(target)
            except InputError as exc:
                assert kind in exc.message and exc.path == str(target)
            else:
                raise AssertionError(f"{target} was read")


TEMPLATES = Path(__file__).resolve().parent.parent / "src/gpudecide/templates/workspace"
VALUE_ATTACKS = st.sampled_from(
    [
        ".inf",
        "-.inf",
        ".nan",
        "1e308",
        "9" * 400,
        "-1",
        "&a x",
        "*a",
        "[" * 100 + "]" * 100,
        "{a: 1, a: 2}",
        "!!python/object/apply:os.system [id]",
        "'\U0001f4af :100: [bold]x[/bold]'",
        "",
        "~",
        "[]",
        "{}",
    ]
)


def _config_loaders() -> list[tuple[str, Any]]:
    from gpudecide import workspace
    from gpudecide.artifacts import retention
    from gpudecide.cost import schema
    from gpudecide.queue import slo

    return [
        ("gpudecide.yaml", lambda p: workspace.load(p.parent)),
        ("costs.yaml", schema.load),
        ("slo.yaml", slo.load),
        ("retention.yaml", retention.load),
    ]


@SETTINGS
@given(st.integers(0, 10_000), VALUE_ATTACKS, st.booleans())
def test_config_files_with_one_value_attacked(pick: int, value: str, duplicate: bool) -> None:
    for name, load in _config_loaders():
        text = (TEMPLATES / name).read_text()
        lines = text.splitlines()
        keyed = [i for i, ln in enumerate(lines) if ":" in ln and not ln.lstrip().startswith("#")]
        i = keyed[pick % len(keyed)]
        key = lines[i].split(":")[0]
        lines[i] = f"{key}: {value}"
        if duplicate:
            lines.insert(i + 1, lines[i])
        folder = Path(tempfile.mkdtemp(dir=_DIR))
        path = folder / name
        path.write_text("\n".join(lines) + "\n")
        try:
            load(path)
        except InputError as exc:
            assert exc.path is not None and str(folder) in exc.path
            assert "\n" not in exc.one_line()
