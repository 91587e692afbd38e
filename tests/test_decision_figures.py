"""The decision reads other packages' records through their figures models (issue 23): the
same answer from a record the model reads, and from one it cannot read (hand-written, of
an older shape, an odd value) the answer of a record without those figures, never a crash.
Each case has a twin whose record the model reads."""

from __future__ import annotations

from typing import Any

from gpudecide import evidence as ev
from gpudecide.decision import conditions, coverage, reversibility
from gpudecide.decision.context import RuleContext, standing, typed
from gpudecide.options import OptionDecl
from gpudecide.portability.figures import figures_of as export_test_figures

OPTIONS = [
    OptionDecl.model_validate({"id": "own", "kind": "owned", "contour": {"executor": "slurm"}}),
    OptionDecl.model_validate({"id": "man", "kind": "managed"}),
]


def record(kind: str, figures: dict[str, Any], verdict: str = "info") -> ev.Evidence:
    return ev.seal(
        ev.Evidence(
            kind=kind,
            title=kind,
            spec_ids=[],
            verdict=verdict,
            summary=kind,
            figures=figures,
        )
    )


def context(*records: ev.Evidence) -> RuleContext:
    return RuleContext(OPTIONS, checks=standing(list(records), OPTIONS))


def _item(ctx: RuleContext, option: str, item: str) -> coverage.CoverageItem:
    opt = ctx.option(option)
    assert opt is not None
    return next(i for i in coverage.coverage(ctx, opt) if i.id == item)


def _condition(ctx: RuleContext, cid: str) -> conditions.Condition:
    found = conditions.dedicated(ctx) + conditions.managed(ctx)
    return next(c for c in found if c.id == cid)


def test_typed_is_none_without_a_record_or_for_figures_the_model_cannot_read() -> None:
    good = record("export_test", {"option": "man", "verdict": "pass"}, "pass")
    tested = typed(good, export_test_figures)
    assert tested is not None and tested.verdict == "pass"
    assert typed(None, export_test_figures) is None
    assert typed(record("export_test", {"option": "man"}), export_test_figures) is None
    assert typed(record("audit", {"verdict": "pass"}), export_test_figures) is None  # its kind


def test_an_export_test_without_a_verdict_in_its_figures_reads_as_before() -> None:
    """The figures' verdict only ever failed a passed record; lacking it, the record's own
    verdict stands (coverage), and the export is not verified (D2), as before."""
    bare = context(record("export_test", {"option": "man"}, "pass"))
    assert _item(bare, "man", "export_proven").state != "failed"
    assert _condition(bare, "export_verified").state == "false"
    # The twin: figures the model reads, their verdict failing a passed record.
    failing = context(record("export_test", {"option": "man", "verdict": "fail"}, "pass"))
    assert _item(failing, "man", "export_proven").state == "failed"
    passing = context(record("export_test", {"option": "man", "verdict": "pass"}, "pass"))
    assert _condition(passing, "export_verified").state == "true"


def test_odd_export_figures_leave_the_move_out_unmeasured() -> None:
    """A throughput or size that is not a number reads as not measured (it raised before)."""
    odd = {"option": "man", "verdict": "pass", "export_gbps": "fast", "bytes_exported": "lots"}
    out = reversibility.for_option(context(record("export_test", odd, "pass")), "man")
    assert out["move_out"]["gbps"] is None and out["move_out"]["bytes"] is None
    assert out["manual_actions"] == []
    # The twin: 2 GB at 0.5 GB/s, measured.
    good = {**odd, "export_gbps": 0.5, "bytes_exported": 2_000_000_000, "manual_actions": ["a"]}
    out = reversibility.for_option(context(record("export_test", good, "pass")), "man")
    assert out["move_out"]["gbps"] == 0.5 and out["move_out"]["bytes"] == 2_000_000_000
    assert out["move_out"]["hours"] == 0.0011  # 4 s, to the two digits it holds
    assert out["manual_actions"] == ["a"]


def test_a_standard_path_record_the_model_cannot_read_needs_nothing() -> None:
    """Needs of a record without its rows and findings are not read (as a record without
    needs); the twin, the record as `check standard-path` writes it, needs kernels."""
    needs = {"custom_kernels": True}
    bare = context(record("standard_path", {"needs": needs}))
    assert _condition(bare, "low_level_tuning").state == "false"
    assert _condition(bare, "standard_container").state == "true"
    whole = context(record("standard_path", {"needs": needs, "options": [], "findings": []}))
    assert _condition(whole, "low_level_tuning").state == "true"
    assert _condition(whole, "standard_container").state == "true"  # kernels ship in images
    driver = {"needs": {"modified_driver": True}, "options": [], "findings": []}
    assert _condition(context(record("standard_path", driver)), "standard_container").state == (
        "false"
    )


def _drill(**extra: Any) -> dict[str, Any]:
    return {
        "option": "own",
        "drill": "node-loss",
        "verdict": "pass",
        "noticed": True,
        "data_kept": True,
        "explained": True,
        "executor": "slurm",
        "contour": {"executor": "slurm", "storage": "/scratch/ckpt"},
        **extra,
    }


def test_a_drill_record_the_model_cannot_read_has_no_external_storage() -> None:
    """Its checkpoints are where its contour says (a local folder here): rehearsed, never
    verified on the strength of a figure the model cannot read."""
    figures = _drill(external_storage="s3://ckpt/")
    del figures["noticed"]
    item = _item(context(record("drill", figures, "pass")), "own", "node_loss_drilled")
    assert item.state == "rehearsed"
    # The twin: the same drill as the drills write it, its checkpoints in an object store.
    whole = context(record("drill", _drill(external_storage="s3://ckpt/"), "pass"))
    assert _item(whole, "own", "node_loss_drilled").state == "verified"
    local = context(record("drill", _drill(), "pass"))
    assert _item(local, "own", "node_loss_drilled").state == "rehearsed"
