"""Lines as line-oriented tools count them (`gpudecide.textlines`): a line ends at "\\n" only,
so a JSON string, a file name or a kernel message holding "\\u2028", "\\x0c" or a lone "\\r"
stays one line, and an error names the line `sed -n Np` shows."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from gpudecide.artifacts import hashing
from gpudecide.drills import telemetry
from gpudecide.errors import InputError
from gpudecide.portability.from_export import read_metrics
from gpudecide.textlines import split_lines

# What str.splitlines also cuts at, and line-oriented tools do not.
OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\n" + OTHER_BREAKS))),
       st.sampled_from(["\n", "\r\n"]), st.booleans())  # fmt: skip
def test_plain_text_is_cut_as_splitlines_cuts_it(lines: list[str], end: str, last: bool) -> None:
    text = end.join(lines) + (end if last and lines else "")
    assert split_lines(text) == text.splitlines()


@given(st.text())
@example("\r0")
@example("a\u2028b\n\x0cc\r\n")
def test_a_line_ends_at_a_newline_only(text: str) -> None:
    got = split_lines(text)
    assert len(got) == text.count("\n") + (0 if text == "" or text.endswith("\n") else 1)
    assert "\n" not in "".join(got)


def test_a_metrics_row_with_a_line_separator_in_a_string_is_one_row(tmp_path: Path) -> None:
    """JSON allows U+2028 unescaped in a string (json.dumps(ensure_ascii=False) writes it)."""
    path = tmp_path / "metrics.jsonl"
    rows = [{"step": 1, "loss": 0.5, "note": "a\u2028b\x85c"}, {"step": 2, "loss": 0.25}]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    assert [(r["step"], r["loss"]) for r in read_metrics(path)] == [(1, 0.5), (2, 0.25)]


def test_a_bad_metrics_line_is_named_by_its_newline_count(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "loss": 0.5, "note": "\u2028"}\n\r0\n')
    with pytest.raises(InputError) as exc:
        read_metrics(path)
    assert exc.value.line == 2 and "holds int" in str(exc.value)


def test_sha256sum_lines_of_names_that_hold_other_breaks(tmp_path: Path) -> None:
    """sha256sum escapes only "\\n", "\\\\" (and "\\r" in newer releases) in a name: a name
    holding U+2028 or a form feed is written as it is, and read back as one entry."""
    names = ["a\u2028b.bin", "c\x0cd.bin", "e\x1cf.bin", "plain.bin"]
    for i, name in enumerate(names):
        (tmp_path / name).write_bytes(bytes([i]) * 10)
    text = subprocess.run(
        ["sha256sum", *names], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    entries = hashing.parse_sums(text, tmp_path / "SHA256SUMS")
    assert [(n, h, line) for n, h, line in entries] == [
        (name, hashlib.sha256(bytes([i]) * 10).hexdigest(), i + 1) for i, name in enumerate(names)
    ]


def test_a_kernel_log_error_names_the_line_after_a_form_feed(tmp_path: Path) -> None:
    path = tmp_path / "gpu-node-02.kern.log"
    path.write_text(
        "2026-06-03T02:14:07.514170+05:00 gpu-node-02 kernel: NVRM: crash\x0cdump written\n"
        "2026-06-33T02:14:07.512894+05:00 gpu-node-02 kernel: NVRM: Xid (PCI:0000:3b:00): 79, "
        "pid=1, name=python, GPU has fallen off the bus.\n"
    )
    with pytest.raises(InputError) as exc:
        telemetry.read_kernel_log(path, path.read_text(), None)
    assert exc.value.line == 2
