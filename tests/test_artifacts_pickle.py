"""Pickle scanning by opcodes: dangerous imports and calls are found, torch's own files pass,
nothing is ever unpickled, and arbitrary bytes give findings, never a crash (SPEC A7)."""

from __future__ import annotations

import io
import os
import pickle
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpudecide.artifacts import pickle_scan, torch_files

FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Reduce:
    """Pickles as a call of `func(*args)`."""

    def __init__(self, func: Any, *args: Any) -> None:
        self.func, self.args = func, args

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (self.func, self.args)


def _dangerous(data: bytes) -> list[str]:
    return pickle_scan.scan_bytes(data).dangerous


@pytest.mark.parametrize("protocol", [0, 1, 2, 3, 4, 5])
def test_os_system_found_at_every_protocol(protocol: int) -> None:
    data = pickle.dumps({"w": Reduce(os.system, "true")}, protocol=protocol)
    found = _dangerous(data)
    assert any(("posix.system" in d or "os.system" in d) for d in found), found


@pytest.mark.parametrize(
    ("func", "name"),
    [
        (eval, "builtins.eval"),
        (exec, "builtins.exec"),
        (getattr, "builtins.getattr"),
        (subprocess.Popen, "subprocess.Popen"),
        (subprocess.check_output, "subprocess.check_output"),
    ],
)
def test_code_execution_imports_found(func: Any, name: str) -> None:
    found = _dangerous(pickle.dumps(Reduce(func, "x"), protocol=4))
    assert any(name in d for d in found), found


def test_memo_evasion_of_stack_global_is_resolved() -> None:
    # The module and name strings are memoised, then fetched back with BINGET before
    # STACK_GLOBAL: scanners that only look at the two previous opcodes miss it.
    payload = (
        b"\x80\x04"
        b"\x8c\x05posix\x94"  # 'posix', MEMOIZE -> memo 0
        b"\x8c\x06system\x94"  # 'system', MEMOIZE -> memo 1
        b"0"  # POP
        b"0"  # POP
        b"h\x00h\x01"  # BINGET 0, BINGET 1
        b"\x93"  # STACK_GLOBAL
        b"\x8c\x04true\x85R."  # ('true',) REDUCE STOP
    )
    assert any("posix.system" in d for d in _dangerous(payload))


def test_computed_stack_global_and_computed_call_are_dangerous() -> None:
    computed = b"\x80\x04K\x01K\x02\x93)R."  # STACK_GLOBAL on two ints
    assert any("computed operands" in d for d in _dangerous(computed))
    # REDUCE whose callable is the result of another call, not an import
    chained = b"\x80\x04\x8c\x0bcollections\x8c\x0bOrderedDict\x93)R)R."
    assert any("computed callable" in d for d in _dangerous(chained))


def test_inst_and_ext_opcodes() -> None:
    inst = b"(S'true'\nios\nsystem\n."  # protocol 0 INST
    assert any("os.system" in d for d in _dangerous(inst))
    ext = b"\x80\x02\x82\x07)R."  # EXT1 code 7
    assert any("extension code" in d for d in _dangerous(ext))


def test_unknown_module_is_outside_the_allowlist() -> None:
    data = b"\x80\x04\x8c\x08mypkg.io\x8c\x04Load\x93)R."
    found = _dangerous(data)
    assert found and "not on the allowlist" in found[0]


def test_plain_data_is_clean_and_constants_are_read() -> None:
    data = pickle.dumps({"global_step": 42, "epoch": 2.5, "name": "run"}, protocol=2)
    report = pickle_scan.scan_bytes(data)
    assert report.dangerous == [] and report.problems == []
    assert report.value_after("global_step") == 42 and report.value_after("epoch") == 2.5


def test_torch_save_zip_and_legacy_are_safe(tmp_path: Path) -> None:
    import torch

    sd = {"w": torch.zeros(3, 2, dtype=torch.bfloat16), "step": 5}
    torch.save(sd, tmp_path / "z.pt")
    torch.save(sd, tmp_path / "l.pt", _use_new_zipfile_serialization=False)
    z = torch_files.inspect_zip(tmp_path / "z.pt")
    legacy = torch_files.inspect_pickle_file(tmp_path / "l.pt")
    assert z.container == "zip" and legacy.container == "legacy"
    for info in (z, legacy):
        assert info.pickle.dangerous == [] and info.problems == [] and info.pickle.problems == []
        assert {g.dotted for g in info.pickle.globals} >= {"torch._utils._rebuild_tensor_v2"}
        assert info.pickle.value_after("step") == 5


def test_torch_zip_carrying_a_payload(tmp_path: Path) -> None:
    import torch

    marker = tmp_path / "marker"
    torch.save({"model": Reduce(os.system, f"touch {marker}")}, tmp_path / "evil.pt")
    info = torch_files.inspect_zip(tmp_path / "evil.pt")
    assert any("system" in d for d in info.pickle.dangerous)
    assert not marker.exists()


def test_truncated_and_garbage_are_problems() -> None:
    data = pickle.dumps({"a": list(range(100))}, protocol=4)
    assert pickle_scan.scan_bytes(data[:-5]).problems
    assert pickle_scan.scan_bytes(b"\xff\xfe\xfd").problems
    huge = b"\x80\x04\x8e" + (2**62).to_bytes(8, "little") + b"x"  # BINBYTES8 claiming 4 EB
    assert pickle_scan.scan_bytes(huge).problems


def test_bounded_reader_never_reads_past_its_limit() -> None:
    raw = io.BytesIO(b"0123456789")
    reader = pickle_scan.BoundedReader(raw, 4)
    assert reader.read(100) == b"0123" and reader.read(1) == b"" and reader.left == 0


@FUZZ
@given(st.binary(max_size=300))
def test_fuzz_arbitrary_bytes(data: bytes) -> None:
    report = pickle_scan.scan_bytes(data)
    # Whatever the bytes: problems are short sentences, bounded in number; never a crash.
    assert len(report.problems) <= pickle_scan.MAX_PROBLEMS
    assert all(isinstance(p, str) and p.strip() for p in report.problems)
    assert all(g.level in ("safe", "library", "dangerous", "untrusted") for g in report.globals)


@FUZZ
@given(st.data())
def test_fuzz_mutated_real_pickles(data: st.DataObject) -> None:
    obj = {"state": {0: {"step": 3, "exp_avg": [1.0, 2.0]}}, "param_groups": [{"lr": 0.1}]}
    blob = bytearray(pickle.dumps(obj, protocol=data.draw(st.integers(0, 5))))
    for _ in range(data.draw(st.integers(1, 4))):
        blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
    report = pickle_scan.scan_bytes(bytes(blob))
    for g in report.globals:
        assert g.level in ("safe", "library", "dangerous", "untrusted")
