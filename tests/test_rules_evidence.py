"""Evidence freshness and identity (DESIGN: the one idea): each rule with its negative case and
its boundary. Digests are computed here with hashlib, independently of the module."""

from __future__ import annotations

import hashlib
import json
import os
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from gpudecide import evidence as ev
from gpudecide.errors import InputError
from gpudecide.message import english

F = ev.Freshness


def _freshness(rec: ev.Evidence, root: Path) -> tuple[ev.Freshness, list[str]]:
    """The record's state and its problems as the English reader reads them."""
    state, problems = ev.freshness(rec, root)
    return state, [english(m) for m in problems]


def _inputs(tmp_path: Path, n: int) -> list[Path]:
    paths = []
    for i in range(n):
        p = tmp_path / f"in{i}.txt"
        p.write_text(f"input {i}\n")
        paths.append(p)
    return paths


def _record(tmp_path: Path, inputs: list[Path], **figures: object) -> ev.Evidence:
    return ev.Evidence(
        kind="profile",
        title="t",
        spec_ids=["F1"],
        verdict="info",
        summary="s",
        figures=figures or {"jobs_total": 3},
        inputs=[ev.input_ref(p, tmp_path) for p in inputs],
    )


def test_identity_is_kind_figures_and_inputs_only(tmp_path: Path) -> None:
    (src,) = _inputs(tmp_path, 1)
    rec = _record(tmp_path, [src])
    a = ev.seal(rec, now=datetime(2026, 1, 1, tzinfo=UTC))
    b = ev.seal(
        rec.model_copy(update={"summary": "other words", "notes": ["n"]}),
        now=datetime(2027, 1, 1, tzinfo=UTC),
    )
    core = {
        "kind": "profile",
        "figures": {"jobs_total": 3},
        "inputs": [
            {
                # any further field of an input reference, as the record holds it
                **rec.inputs[0].model_dump(),
                "path": "in0.txt",
                "sha256": hashlib.sha256(src.read_bytes()).hexdigest(),
                "size": src.stat().st_size,
            }
        ],
    }
    want = hashlib.sha256(
        json.dumps(core, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()
    assert a.id == b.id == f"profile-{want[:16]}"
    assert a.created_at_utc == "2026-01-01T00:00:00.000000Z"
    # Another figure, another id (negative case).
    c = ev.seal(_record(tmp_path, [src], jobs_total=4))
    assert c.id != a.id and c.id.startswith("profile-") and len(c.id) == len("profile-") + 16
    # The content hash covers everything else, so the two records differ there.
    assert a.content_sha256 != b.content_sha256
    body = a.model_dump(exclude={"content_sha256"})
    assert (
        a.content_sha256
        == hashlib.sha256(
            json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        ).hexdigest()
    )


def test_input_paths_relative_inside_the_root_absolute_outside(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    inside = root / "logs" / "a.txt"
    inside.parent.mkdir()
    inside.write_text("x")
    outside = tmp_path / "b.txt"
    outside.write_text("yy")
    assert ev.input_ref(inside, root).path == "logs/a.txt"
    assert ev.input_ref(outside, root).path == str(outside.resolve())
    assert ev.input_ref(outside).path == str(outside)
    assert ev.input_ref(outside).size == 2


def test_fresh_until_the_content_changes(tmp_path: Path) -> None:
    (src,) = _inputs(tmp_path, 1)
    rec = ev.load(ev.write(_record(tmp_path, [src]), tmp_path / "e"))
    # Touching the file (new mtime, same bytes) is not a change.
    os.utime(src, (1, 1))
    assert _freshness(rec, tmp_path) == (F.FRESH, [])
    # One byte more is.
    src.write_text(src.read_text() + "!")
    assert _freshness(rec, tmp_path) == (
        F.STALE,
        ["in0.txt: input changed since the evidence was computed"],
    )


@pytest.mark.parametrize(
    ("faults", "want"),
    [
        (["stale", "gone"], F.MISSING_INPUT),
        (["gone", "stale"], F.MISSING_INPUT),
        (["stale", "dir"], F.BAD_INPUT),
        (["dir", "gone"], F.BAD_INPUT),
        (["gone", "dir", "stale"], F.BAD_INPUT),
        (["ok", "stale"], F.STALE),
        (["ok", "ok"], F.FRESH),
    ],
)
def test_the_worst_input_decides_and_every_problem_is_listed(
    tmp_path: Path, faults: list[str], want: ev.Freshness
) -> None:
    paths = _inputs(tmp_path, len(faults))
    rec = ev.seal(_record(tmp_path, paths))
    for p, fault in zip(paths, faults, strict=True):
        if fault == "stale":
            p.write_text("changed")
        elif fault == "gone":
            p.unlink()
        elif fault == "dir":
            p.unlink()
            p.mkdir()
    state, problems = _freshness(rec, tmp_path)
    assert state is want
    expected = {
        "stale": "input changed since the evidence was computed",
        "gone": "input is gone",
        "dir": "bad input",
    }
    listed = [(p.name, expected[f]) for p, f in zip(paths, faults, strict=True) if f != "ok"]
    assert len(problems) == len(listed)
    for problem, (name, words) in zip(problems, listed, strict=True):
        assert problem.startswith(f"{name}: {words}"), problem


def test_a_fifo_input_is_bad_input_and_never_read(tmp_path: Path) -> None:
    (src,) = _inputs(tmp_path, 1)
    rec = ev.seal(_record(tmp_path, [src]))
    src.unlink()
    os.mkfifo(src)
    state, problems = _freshness(rec, tmp_path)  # returns at once: nothing opens the FIFO
    assert state is F.BAD_INPUT and problems[0].startswith("in0.txt: bad input")


def test_tampered_beats_every_input_state(tmp_path: Path) -> None:
    (src,) = _inputs(tmp_path, 1)
    path = ev.write(_record(tmp_path, [src]), tmp_path / "e")
    src.unlink()  # an input is gone as well: the edit is still what is reported
    for key, value in [("summary", "better"), ("created_at_utc", "2020-01-01T00:00:00Z")]:
        body = json.loads(path.read_text())
        body[key] = value
        edited = tmp_path / f"edited-{key}.json"
        edited.write_text(json.dumps(body))
        rec = ev.load(edited)
        assert _freshness(rec, tmp_path) == (
            F.TAMPERED,
            ["the record was edited after it was written"],
        )
        with pytest.raises(InputError) as exc:
            ev.load(edited, verify=True)
        assert exc.value.field == "content_sha256" and exc.value.path == str(edited)
    # The untouched record loads with verify=True (negative case).
    assert ev.load(path, verify=True).id == path.stem


def test_latest_is_the_newest_of_its_kind(tmp_path: Path) -> None:
    (src,) = _inputs(tmp_path, 1)
    t = datetime(2026, 3, 1, tzinfo=UTC)
    old = ev.seal(_record(tmp_path, [src], jobs_total=1), now=t)
    new = ev.seal(_record(tmp_path, [src], jobs_total=2), now=t + timedelta(microseconds=1))
    other = ev.seal(
        ev.Evidence(kind="queue", title="q", spec_ids=[], verdict="info", summary="", figures={}),
        now=t + timedelta(days=1),
    )
    folder = tmp_path / "e"
    for rec in (new, other, old):  # written out of order
        ev.write(rec, folder)
    records = ev.load_all(folder)
    assert [r.id for r in records] == [old.id, new.id, other.id]
    latest = ev.latest(records, "profile")
    assert latest is not None and latest.figures == {"jobs_total": 2}
    assert ev.latest(records, "cost") is None


def test_a_damaged_record_is_listed_and_the_rest_still_read(tmp_path: Path) -> None:
    (src,) = _inputs(tmp_path, 1)
    folder = tmp_path / "e"
    good = ev.write(_record(tmp_path, [src]), folder)
    (folder / "broken.json").write_text(good.read_text()[:40])
    records, damaged = ev.scan(folder)
    assert [r.id for r in records] == [good.stem]
    assert [d.path.name for d in damaged] == ["broken.json"]
    assert damaged[0].reason.startswith(str(folder / "broken.json"))
    assert ev.scan(tmp_path / "absent") == ([], [])


def test_non_finite_figures_are_refused_before_writing(tmp_path: Path) -> None:
    (src,) = _inputs(tmp_path, 1)
    folder = tmp_path / "e"
    for bad in (float("nan"), float("inf")):
        with pytest.raises(InputError):
            ev.write(_record(tmp_path, [src], share=bad), folder)
    assert not folder.exists() or list(folder.iterdir()) == []
    # A large but finite figure is written (boundary).
    assert ev.write(_record(tmp_path, [src], share=1e308), folder).is_file()


def test_identity_hash_keeps_non_ascii_text_as_is(tmp_path: Path) -> None:
    (src,) = _inputs(tmp_path, 1)
    rec = ev.seal(_record(tmp_path, [src], site="Алматы"))
    core = {
        "kind": "profile",
        "figures": {"site": "Алматы"},
        "inputs": [i.model_dump() for i in rec.inputs],
    }
    raw = json.dumps(core, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert "Алматы" in raw  # the digest is over UTF-8 text, not \\u escapes
    assert rec.id == "profile-" + hashlib.sha256(raw.encode()).hexdigest()[:16]


def test_seal_stamps_utc_whatever_the_clock_zone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The machine's own zone is not UTC here: a local stamp would show.
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    (src,) = _inputs(tmp_path, 1)
    almaty = datetime(2026, 1, 1, 5, 0, 0, 7, tzinfo=timezone(timedelta(hours=5)))
    try:
        rec = ev.seal(_record(tmp_path, [src]), now=almaty)
        assert rec.created_at_utc == "2026-01-01T00:00:00.000007Z"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_record_file_is_indented_json(tmp_path: Path) -> None:
    (src,) = _inputs(tmp_path, 1)
    path = ev.write(_record(tmp_path, [src]), tmp_path / "e")
    text = path.read_text()
    assert text.startswith('{\n  "id": "profile-') and text.endswith("}\n")


def test_write_refusals_name_what_is_wrong(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (src,) = _inputs(tmp_path, 1)
    with pytest.raises(InputError) as exc:
        ev.write(_record(tmp_path, [src], share=float("nan")), tmp_path / "e")
    assert exc.value.message.startswith("the profile result is not a finite number: figures")
    assert exc.value.hint == (
        "an input holds an impossible value; check the inputs of this analysis"
    )
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError) as exc:
        ev.write(_record(tmp_path, [src]), blocker)
    assert exc.value.message == "is a file, not a folder for evidence records"
    assert exc.value.path == str(blocker)
    assert exc.value.hint == "move the file away or pass another evidence folder"
    # Size limit, on both sides of the boundary: a record of exactly the limit is written.
    rec = ev.seal(_record(tmp_path, [src], blob="x" * 5000))
    size = len(rec.model_dump_json(indent=2) + "\n")
    monkeypatch.setattr(ev, "MAX_RECORD_BYTES", size)
    assert ev.write(rec, tmp_path / "ok").is_file()
    monkeypatch.setattr(ev, "MAX_RECORD_BYTES", size - 1)
    with pytest.raises(InputError) as exc:
        ev.write(rec, tmp_path / "big")
    assert not (tmp_path / "big").exists() or not list((tmp_path / "big").iterdir())
    assert exc.value.path == str(tmp_path / "big")
    assert exc.value.hint == "an input is far larger than this analysis expects"
    monkeypatch.setattr(ev, "MAX_RECORD_BYTES", 3 << 20)
    with pytest.raises(InputError) as exc:
        ev.write(_record(tmp_path, [src], blob="x" * (3 << 20)), tmp_path / "big")
    assert exc.value.message == "the profile record would be over 3 MiB"


def test_load_refusals_name_the_field(tmp_path: Path) -> None:
    (src,) = _inputs(tmp_path, 1)
    good = ev.write(_record(tmp_path, [src]), tmp_path / "e")
    body = json.loads(good.read_text())
    body["kind"] = 1  # exactly one validation error
    bad = tmp_path / "kind.json"
    bad.write_text(json.dumps(body))
    with pytest.raises(InputError) as exc:
        ev.load(bad)
    assert exc.value.field == "kind" and exc.value.path == str(bad)
    assert exc.value.message.startswith("not a gpudecide evidence record: ")
    assert exc.value.hint == "re-run the analysis that wrote it"
    body = json.loads(good.read_text())
    body["inputs"][0]["sha256"] = 5
    nested = tmp_path / "nested.json"
    nested.write_text(json.dumps(body))
    with pytest.raises(InputError) as exc:
        ev.load(nested)
    assert exc.value.field == "inputs.0.sha256"
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{}")
    with pytest.raises(InputError) as exc:
        ev.load(binary)
    assert exc.value.message == "not a gpudecide evidence record: not UTF-8 text"
    assert exc.value.path == str(binary) and exc.value.hint == "re-run the analysis that wrote it"
    body = json.loads(good.read_text())
    body["summary"] = "edited"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(body))
    with pytest.raises(InputError) as exc:
        ev.load(edited, verify=True)
    assert exc.value.message == (
        "the record was edited after it was written (content hash does not match)"
    )
    assert exc.value.hint == "re-run the analysis that wrote it"


def test_scan_lists_a_tampered_record_as_a_record(tmp_path: Path) -> None:
    # Tampering is shown by freshness; scan must not hide the record as damaged.
    (src,) = _inputs(tmp_path, 1)
    folder = tmp_path / "e"
    path = ev.write(_record(tmp_path, [src]), folder)
    body = json.loads(path.read_text())
    body["summary"] = "edited"
    path.write_text(json.dumps(body))
    records, damaged = ev.scan(folder)
    assert [r.id for r in records] == [path.stem] and damaged == []


def test_latest_of_three(tmp_path: Path) -> None:
    (src,) = _inputs(tmp_path, 1)
    t = datetime(2026, 3, 1, tzinfo=UTC)
    recs = [
        ev.seal(_record(tmp_path, [src], jobs_total=i), now=t + timedelta(seconds=i))
        for i in range(3)
    ]
    latest = ev.latest(recs, "profile")
    assert latest is not None and latest.figures == {"jobs_total": 2}


def test_input_ref_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError) as exc:
        ev.input_ref(fifo, tmp_path)
    assert exc.value.path == str(fifo)
    assert exc.value.message == "is a FIFO (named pipe), not a regular file"


def test_subject_and_superseded_records(tmp_path: Path) -> None:
    t = datetime(2026, 3, 1, tzinfo=UTC)

    def rec(kind: str, i: int, **figures: object) -> ev.Evidence:
        return ev.seal(
            ev.Evidence(
                kind=kind, title="t", spec_ids=[], verdict="info", summary="",
                figures={"n": i, **figures},
            ),
            now=t + timedelta(seconds=i),
        )  # fmt: skip

    a1, a2 = rec("cost", 1, option="own"), rec("cost", 2, option="own")
    b1 = rec("cost", 3, option="rent")
    q1 = rec("queue", 4, option=7)  # a non-text option concerns no one option
    assert ev.subject(a1) == ("cost", "own") and ev.subject(q1) == ("queue", None)
    assert ev.superseded([a1, a2, b1, q1]) == {a1.id}
    assert ev.superseded([a1, b1]) == set()


def test_relative_figures_rewrite_paths_inside_the_workspace(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    inside = f"{root.resolve()}/exports/run1"
    figures = {
        "path": inside,
        "texts": [f"9 files to {inside}", "/elsewhere/x"],
        "nested": {"n": 3, "p": inside},
    }
    assert ev.relative_figures(figures, root) == {
        "path": "exports/run1",
        "texts": ["9 files to exports/run1", "/elsewhere/x"],
        "nested": {"n": 3, "p": "exports/run1"},
    }
    assert ev.relative_figures(figures, None) is figures
