"""The pickle scanner against an independent oracle: CPython's own unpickler, with every
import replaced by an inert stub, names the globals a pickle reaches. The scanner must name
the same set, on pickles of every protocol built from a palette of objects, and flag the
ones that run code. Nothing real is ever imported or called by the oracle: `find_class`
returns the stub, never the named object."""

from __future__ import annotations

import _compat_pickle
import collections
import datetime
import decimal
import fractions
import io
import os
import pickle
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gpudecide.artifacts import pickle_scan

from .conftest import examples


class _Stub:
    """Stands in for any imported name: accepts every call the unpickler makes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args

    def __call__(self, *args: Any, **kwargs: Any) -> _Stub:
        return _Stub()

    def __setstate__(self, state: Any) -> None:
        self.state = state

    def __setitem__(self, key: Any, value: Any) -> None:
        pass

    def append(self, value: Any) -> None:
        pass

    def extend(self, values: Any) -> None:
        pass


def _globals_by_cpython(data: bytes) -> set[tuple[str, str]]:
    seen: set[tuple[str, str]] = set()

    # The pure-Python unpickler, so that the protocol is known in find_class: protocols 0-2
    # name Python 2 modules (`__builtin__`), which Python maps before importing, and so
    # does the scanner.
    class Recorder(pickle._Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            if getattr(self, "proto", 0) < 3:
                if (module, name) in _compat_pickle.NAME_MAPPING:
                    module, name = _compat_pickle.NAME_MAPPING[(module, name)]
                elif module in _compat_pickle.IMPORT_MAPPING:
                    module = _compat_pickle.IMPORT_MAPPING[module]
            seen.add((module, name))
            return _Stub

    Recorder(io.BytesIO(data)).load()
    return seen


class RunsCode:
    """An object whose pickle calls os.system when loaded (the attack the scan exists for)."""

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.system, ("true",))


PALETTE = [
    lambda: collections.OrderedDict(a=1),
    lambda: datetime.date(2026, 1, 2),
    lambda: decimal.Decimal("1.5"),
    lambda: fractions.Fraction(1, 3),
    lambda: collections.Counter("aab"),
    lambda: 3 + 4j,
    lambda: {"plain": [1, 2.5, "x", b"y", None, True]},
    RunsCode,
]


@st.composite
def pickles(draw: st.DrawFn) -> tuple[bytes, int]:
    """A pickle of a nest of palette objects, in any protocol."""
    picks = draw(st.lists(st.integers(0, len(PALETTE) - 1), min_size=1, max_size=5))
    nest: Any = [PALETTE[i]() for i in picks]
    if draw(st.booleans()):
        nest = {"state": nest, "again": nest}  # shared references: memo gets and puts
    protocol = draw(st.integers(0, pickle.HIGHEST_PROTOCOL))
    return pickle.dumps(nest, protocol=protocol), protocol


def test_scanner_names_the_globals_cpython_would_import() -> None:
    reached: list[int] = []

    @settings(
        max_examples=examples(150),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(pickles())
    def check(case: tuple[bytes, int]) -> None:
        data, protocol = case
        want = _globals_by_cpython(data)
        report = pickle_scan.scan_bytes(data)
        got = {(g.module, g.name) for g in report.globals}
        assert got == want, (protocol, sorted(got ^ want))
        assert report.problems == [] and report.pickles == 1
        dangerous = {(g.module, g.name) for g in report.globals if g.level == "dangerous"}
        assert dangerous == {(m, n) for m, n in want if n == "system"}
        event(f"protocol {protocol}; globals: {min(len(want), 3)}+")
        reached.append(len(want))

    check()
    # The palette makes most pickles import something: the global handling is exercised.
    assert sum(1 for n in reached if n) >= 0.7 * len(reached)


def test_run_code_object_is_dangerous_in_every_protocol() -> None:
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        report = pickle_scan.scan_bytes(pickle.dumps(RunsCode(), protocol=protocol))
        levels = {(g.module, g.name): g.level for g in report.globals}
        assert levels == {(os.system.__module__, "system"): "dangerous"}, protocol


@settings(max_examples=examples(200), deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_raise_and_problems_are_sentences(data: bytes) -> None:
    report = pickle_scan.scan_bytes(data)
    assert all(isinstance(p, str) and p for p in report.problems)
    assert len(report.problems) <= pickle_scan.MAX_PROBLEMS
    # A stream the scanner accepts without a problem names only string globals.
    for g in report.globals:
        assert isinstance(g.module, str) and isinstance(g.name, str)
        assert g.level in ("safe", "library", "dangerous", "untrusted")
    event("problems" if report.problems else "no problems")
