"""Auto-cordon (SPEC G2, G3): telemetry in the documented formats -> per-GPU actions."""

from __future__ import annotations

import json
import os
import socket
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.drills import cordon, cordon_rules, cordon_run, telemetry
from gpudecide.drills.cli import register
from gpudecide.drills.cordon_figures import CordonFigures, figures_of
from gpudecide.drills.report import cordon_section
from gpudecide.i18n import speaking
from gpudecide.report.model import Section

FIX = Path(__file__).parent / "fixtures" / "telemetry"
SMI_HEADER = (
    "timestamp, index, pci.bus_id, serial, ecc.errors.corrected.volatile.total, "
    "ecc.errors.uncorrected.volatile.total, ecc.errors.corrected.aggregate.total, "
    "ecc.errors.uncorrected.aggregate.total, retired_pages.sbe, retired_pages.dbe, "
    "retired_pages.pending"
)


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """The root app, as the main CLI builds it."""

    register(app)
    return app


def _smi(path: Path, counts: list[int], hours: float = 3.0, **extra: str) -> Path:
    """An nvidia-smi -l loop capture of one GPU whose corrected count follows `counts`."""
    t0 = datetime(2026, 6, 2, 3, 0, tzinfo=UTC)
    rows = [SMI_HEADER]
    for k, c in enumerate(counts):
        t = t0 + timedelta(hours=hours * k)
        dbe = extra.get("dbe", "0")
        pending = extra.get("pending", "No")
        rows.append(
            f"{t:%Y/%m/%d %H:%M:%S}.000, 0, 00000000:18:00.0, 1652221034512, {c}, {dbe}, "
            f"{c}, 0, {extra.get('sbe_pages', '0')}, 0, {pending}"
        )
    path.write_text("\n".join(rows) + "\n")
    return path


def _decide(*paths: Path, rules: cordon_rules.CordonRules | None = None) -> cordon.CordonResult:
    return cordon.decide(telemetry.read_all(list(paths)), rules or cordon_rules.CordonRules())


def _by(result: cordon.CordonResult) -> dict[tuple[str, int | None, str | None], str]:
    return {(g.node, g.index, g.bus): g.action for g in result.gpus}


def test_rising_corrected_errors_are_cordoned_g2() -> None:
    """GPU 3 averages 7.1/h (only 'watch'), but its recent half runs at 13.2/h: cordon."""
    result = _decide(FIX / "gpu-node-01.nvidia-smi.csv")
    by = _by(result)
    assert by[("gpu-node-01", 3, "0000:5d:00")] == "cordon"
    assert by[("gpu-node-01", 0, "0000:18:00")] == "ok"
    g3 = next(g for g in result.gpus if g.index == 3)
    assert g3.corrected_per_hour == pytest.approx(170 / 24, abs=1e-3)
    assert "rising: 13.2/h" in g3.reasons[0].text
    # The evidence quotes the first and last line of the window, as the file has them.
    assert g3.reasons[0].lines[0].line == 5
    assert g3.reasons[0].lines[-1].text.startswith("2026/06/03 03:00:00.170, 3, 00000000:5D:00.0")
    plan = next(p for p in result.nodes if p.node == "gpu-node-01")
    assert plan.commands[0][:5] == [
        "scontrol", "--", "update", "NodeName=gpu-node-01", "State=DRAIN"
    ]  # fmt: skip
    assert plan.commands[0][5].startswith("Reason=gpudecide cordon: GPU 3 0000:5d:00")


def test_steady_errors_stay_ok_and_a_flat_high_count_is_not_a_rate(tmp_path: Path) -> None:
    """Negative twin: 500 old corrected errors that do not grow are no reason to act."""
    result = _decide(_smi(tmp_path / "n1.nvidia-smi.csv", [500] * 9))
    assert _by(result)[("n1", 0, "0000:18:00")] == "ok"
    assert result.gpus[0].corrected_per_hour == 0.0
    assert result.nodes[0].commands == []


def test_rate_threshold_boundaries(tmp_path: Path) -> None:
    """Exactly 10/h (steady) is cordon; 9.9/h is watch; 1/h watch; below 1/h ok."""
    rules = cordon_rules.CordonRules()
    cases = {10.0: "cordon", 9.9: "watch", 1.0: "watch", 0.9: "ok"}
    for per_hour, expected in cases.items():
        counts = [round(per_hour * 3 * k, 3) for k in range(5)]
        p = _smi(tmp_path / f"b{per_hour}.nvidia-smi.csv", counts)  # type: ignore[arg-type]
        assert _by(_decide(p, rules=rules))[(f"b{per_hour}", 0, "0000:18:00")] == expected


def test_counter_reset_counts_the_new_value(tmp_path: Path) -> None:
    """A driver reload resets the volatile counter: 40 -> 5 adds 5, not -35."""
    result = _decide(_smi(tmp_path / "r.nvidia-smi.csv", [0, 40, 5, 10]))
    assert result.gpus[0].corrected_per_hour == pytest.approx((40 + 5 + 5) / 9, abs=1e-3)


def test_one_sample_has_no_rate_and_says_so(tmp_path: Path) -> None:
    result = _decide(_smi(tmp_path / "one.nvidia-smi.csv", [900]))
    assert result.gpus[0].corrected_per_hour is None
    assert any("rate not measured" in n for n in result.notes)


def test_xid_catalogue_actions() -> None:
    """79 drains; 13 (application) is ok; 63 and 94 alone are watched, never excluded."""
    by = _by(_decide(FIX / "gpu-node-02.kern.log", FIX / "gpu-node-03.kern.log"))
    assert by[("gpu-node-02", None, "0000:3b:00")] == "drain-and-reset"
    assert by[("gpu-node-02", None, "0000:18:00")] == "ok"
    assert by[("gpu-node-03", None, "0000:5d:00")] == "watch"


def test_xid_79_twice_means_replace(tmp_path: Path) -> None:
    line = (
        "2026-06-0{d}T02:14:07+05:00 gpu-node-09 kernel: NVRM: Xid (PCI:0000:3b:00): 79, "
        "pid=2291043, name=python, GPU has fallen off the bus.\n"
    )
    once = tmp_path / "once.log"
    once.write_text(line.format(d=3))
    twice = tmp_path / "twice.log"
    twice.write_text(line.format(d=3) + line.format(d=4))
    assert _decide(once).gpus[0].action == "drain-and-reset"
    assert _decide(twice).gpus[0].action == "replace"


def test_syslog_host_wins_over_file_name(tmp_path: Path) -> None:
    p = tmp_path / "other-name.kern.log"
    p.write_text((FIX / "gpu-node-02.kern.log").read_text())
    assert {g.node for g in _decide(p).gpus} == {"gpu-node-02"}


def test_kernel_log_joins_nvidia_smi_by_bus_id() -> None:
    """The Xid names PCI:0000:3b:00, nvidia-smi 00000000:3B:00.0 with index 1: one GPU."""
    result = _decide(
        FIX / "gpu-node-02.kern.log",
        FIX / "gpu-node-02.nvidia-smi.csv",
        FIX / "gpu-node-02.remapped-rows.csv",
    )
    g = next(g for g in result.gpus if g.bus == "0000:3b:00")
    assert g.index == 1
    assert g.action == "drain-and-reset"
    texts = [r.text for r in g.reasons]
    assert "Xid 79 x1: GPU has fallen off the bus" in texts
    assert "row remapping waits for a GPU reset" in texts
    assert len(result.gpus) == 2
    plan = next(p for p in result.nodes if p.node == "gpu-node-02")
    assert plan.follow_up == [
        "GPU 1: once no job runs on it, nvidia-smi --gpu-reset -i 1 "
        "(or reboot the node if the reset fails)"
    ]


def test_dcgm_exporter_and_dmon() -> None:
    result = _decide(FIX / "gpu-node-04.dcgm.prom", FIX / "gpu-node-05.dmon.txt")
    by = _by(result)
    assert by[("gpu-node-04", 0, "0000:18:00")] == "watch"
    assert by[("gpu-node-05", 1, None)] == "drain-and-reset"
    assert by[("gpu-node-05", 0, None)] == "ok"
    g4 = next(g for g in result.gpus if g.node == "gpu-node-04")
    assert g4.corrected_per_hour == pytest.approx(30 / 12)


def test_retired_pages_and_remap_failure(tmp_path: Path) -> None:
    p = _smi(tmp_path / "pages.nvidia-smi.csv", [0, 0], sbe_pages="60")
    assert _decide(p).gpus[0].action == "replace"
    p59 = _smi(tmp_path / "p59.nvidia-smi.csv", [0, 0], sbe_pages="59")
    assert _decide(p59).gpus[0].action == "ok"
    remap = tmp_path / "x.remapped-rows.csv"
    remap.write_text(
        "gpu_bus_id, remapped_rows.correctable, remapped_rows.uncorrectable, "
        "remapped_rows.pending, remapped_rows.failure\n00000000:18:00.0, 0, 512, No, Yes\n"
    )
    assert _decide(remap).gpus[0].action == "replace"


def test_kubernetes_commands() -> None:
    rules = cordon_rules.CordonRules.model_validate({"commands": {"orchestrator": "kubernetes"}})
    assert cordon.node_commands("n1", "cordon", "x", rules) == [["kubectl", "cordon", "--", "n1"]]
    assert cordon.node_commands("n1", "replace", "x", rules)[1] == [
        "kubectl",
        "taint",
        "nodes",
        "--overwrite",
        "--",
        "n1",
        "gpudecide.io/gpu-health=replace:NoExecute",
    ]
    assert cordon.node_commands("n1", "watch", "x", rules) == []


def _recorder(tmp_path: Path, rc: int = 0) -> Path:
    """A real program standing in for scontrol: it answers `show config` as a controller
    does (ClusterName) and appends every other call's arguments to a file."""
    script = tmp_path / "scontrol"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = show ] && [ "$2" = config ]; then echo "ClusterName = test-cluster"; '
        "exit 0; fi\n"
        f'printf "%s\\n" "$*" >> {tmp_path / "calls.txt"}\n'
        f"exit {rc}\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def _rules_file(tmp_path: Path, scontrol: Path, max_share: float = 0.25) -> Path:
    p = tmp_path / "cordon.yaml"
    p.write_text(f"breaker:\n  max_share: {max_share}\ncommands:\n  scontrol: {scontrol}\n")
    return p


def test_apply_lets_uncorrectable_errors_through_and_audits_first(tmp_path: Path) -> None:
    """The fixture fleet: 5 nodes, share 0.25, so one routine cordon. gpu-node-01's rising
    corrected errors (the article's ECC case) take that one; gpu-node-02 (Xid 79) and
    gpu-node-05 (a double-bit ECC count) must leave service: the breaker lets them through
    and says why. Every node acted on has an intent line before its command and a result
    line after."""
    rules = _rules_file(tmp_path, _recorder(tmp_path))
    audit = tmp_path / "audit.jsonl"
    args = ["cordon", str(FIX), "--rules", str(rules), "--apply", "--json"]
    args += ["--audit", str(audit), "--evidence-dir", str(tmp_path / "ev")]
    r = CliRunner().invoke(_app(), args)
    assert r.exit_code == 0, r.output  # nothing held back, every command taken
    data = json.loads(r.output)
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert [c.split()[2] for c in calls] == [
        "NodeName=gpu-node-01", "NodeName=gpu-node-02", "NodeName=gpu-node-05"
    ]  # fmt: skip
    assert all(c.startswith("-- update NodeName=") and " State=DRAIN " in c for c in calls)
    states = {n["node"]: n["breaker"] for n in data["nodes"] if n["commands"]}
    assert states == {
        "gpu-node-01": "allowed",
        "gpu-node-02": "bypassed",
        "gpu-node-05": "bypassed",
    }
    assert any(
        "let through gpu-node-02 (Xid 79); gpu-node-05 (uncorrected ECC errors: 1)" in n
        for n in data["notes"]
    ), data["notes"]
    lines = [json.loads(x) for x in audit.read_text().splitlines()]
    assert [(x["phase"], x["node"]) for x in lines] == [
        ("intent", "gpu-node-01"), ("intent", "gpu-node-02"), ("intent", "gpu-node-05"),
        ("result", "gpu-node-01"), ("result", "gpu-node-02"), ("result", "gpu-node-05"),
    ]  # fmt: skip
    assert all(x["who"] and x["at"].endswith("Z") and x["why"] and x["applied"] for x in lines)
    assert len({x["run"] for x in lines}) == 1
    assert [x["uncorrectable"] for x in lines[3:]] == [False, True, True]
    assert lines[3]["results"][0]["rc"] == 0 and lines[3]["evidence"] == Path(data["evidence"]).stem
    record = json.loads(Path(data["evidence"]).read_text())
    assert record["kind"] == "cordon" and record["verdict"] == "fail"


def test_the_breaker_holds_routine_cordons_beyond_its_share(tmp_path: Path) -> None:
    """Negative twin of the let-through: with Xid 79 taken off the uncorrectable list, three
    nodes need routine cordons and the breaker has one place: the worst (the drain of Xid 79)
    goes, two are held, exit 1."""
    other = tmp_path / "gpu-node-07.nvidia-smi.csv"
    other.write_text((FIX / "gpu-node-01.nvidia-smi.csv").read_text())
    rules = tmp_path / "cordon.yaml"
    rules.write_text(
        f"breaker:\n  uncorrectable_xids: []\ncommands:\n  scontrol: {_recorder(tmp_path)}\n"
    )
    files = [str(FIX / "gpu-node-02.kern.log"), str(FIX / "gpu-node-01.nvidia-smi.csv"), str(other)]
    args = ["cordon", *files, "--rules", str(rules), "--apply", "--json"]
    args += ["--audit", str(tmp_path / "a.jsonl"), "--evidence-dir", str(tmp_path / "ev")]
    r = CliRunner().invoke(_app(), args)
    assert r.exit_code == 1, r.output
    data = json.loads(r.output)
    states = {n["node"]: n["breaker"] for n in data["nodes"] if n["commands"]}
    assert states == {"gpu-node-01": "held", "gpu-node-02": "allowed", "gpu-node-07": "held"}
    assert len((tmp_path / "calls.txt").read_text().splitlines()) == 1
    assert not any("let through" in n for n in data["notes"])


def test_without_apply_nothing_runs(tmp_path: Path) -> None:
    rules = _rules_file(tmp_path, _recorder(tmp_path), max_share=1.0)
    args = ["cordon", str(FIX / "gpu-node-02.kern.log"), "--rules", str(rules), "--json"]
    args += ["--audit", str(tmp_path / "a.jsonl"), "--evidence-dir", str(tmp_path / "ev")]
    r = CliRunner().invoke(_app(), args)
    assert r.exit_code == 0, r.output
    assert not (tmp_path / "calls.txt").exists()
    gpus = json.loads(r.output)["gpus"]
    assert {"node", "gpu", "action", "reasons"} <= set(gpus[0])


def test_failed_command_is_exit_1(tmp_path: Path) -> None:
    """The scheduler answers, then refuses the drain: exit 1, its exit code shown, and the
    record does not say the cordon was applied to it."""
    rules = _rules_file(tmp_path, _recorder(tmp_path, rc=1), max_share=1.0)
    args = ["cordon", str(FIX / "gpu-node-02.kern.log"), "--rules", str(rules), "--apply"]
    args += ["--audit", str(tmp_path / "a.jsonl"), "--evidence-dir", str(tmp_path / "ev")]
    r = CliRunner().invoke(_app(), [*args, "--json"])
    assert r.exit_code == 1
    data = json.loads(r.output)
    assert data["nodes"][0]["results"][0]["rc"] == 1
    assert data["orchestrator"] is None and data["applied"] is True


def test_apply_without_a_scheduler_is_bad_input_and_runs_nothing(tmp_path: Path) -> None:
    """--apply asks the scheduler first: a missing scontrol, or one whose controller does not
    answer, is exit 2 with one line, and no command, record or audit line is written."""
    down = tmp_path / "down-scontrol"
    down.write_text(
        '#!/bin/sh\necho "scontrol: error: Unable to contact slurm controller" >&2\n'
        f'echo "$*" >> {tmp_path / "calls.txt"}\nexit 1\n'
    )
    down.chmod(0o755)
    for program in (tmp_path / "no-such-scontrol", down):
        rules = _rules_file(tmp_path, program, max_share=1.0)
        audit = tmp_path / "a.jsonl"
        args = ["cordon", str(FIX / "gpu-node-02.kern.log"), "--rules", str(rules), "--apply"]
        args += ["--audit", str(audit), "--evidence-dir", str(tmp_path / "ev")]
        r = CliRunner().invoke(_app(), args)
        assert r.exit_code == 2, r.output
        assert "--apply" in r.output and "Traceback" not in r.output
        assert not audit.exists() and not (tmp_path / "ev").exists()
    assert "Unable to contact" in r.output
    assert (tmp_path / "calls.txt").read_text().split() == ["show", "config"]


def test_bad_inputs_are_one_line_exit_2(tmp_path: Path) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    r = CliRunner().invoke(_app(), ["cordon", str(junk)])
    assert r.exit_code == 2
    assert "junk.txt:1" in r.output and "Traceback" not in r.output
    nameless = tmp_path / "capture.csv"
    nameless.write_text((FIX / "gpu-node-02.nvidia-smi.csv").read_text())
    r = CliRunner().invoke(_app(), ["cordon", str(nameless)])
    assert r.exit_code == 2 and "cannot tell which node" in r.output
    bad_rules = tmp_path / "cordon.yaml"
    bad_rules.write_text("corrected_errors:\n  cordon_per_hour: -3\n")
    r = CliRunner().invoke(_app(), ["cordon", str(FIX), "--rules", str(bad_rules)])
    assert r.exit_code == 2 and "cordon.yaml:2" in r.output
    ragged = tmp_path / "n.nvidia-smi.csv"
    ragged.write_text("index, pci.bus_id\n0, 00000000:18:00.0, 7\n")
    r = CliRunner().invoke(_app(), ["cordon", str(ragged)])
    assert r.exit_code == 2 and "n.nvidia-smi.csv:2" in r.output


def test_fresh_workspace_no_flags(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    workspace.init(root)
    cwd = Path.cwd()
    os.chdir(root)
    try:
        r = CliRunner().invoke(_app(), ["cordon", "--json"])
    finally:
        os.chdir(cwd)
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["gpus"] == [] and data["verdict"] == "info"


def test_report_section_speaks_the_readers_language(tmp_path: Path) -> None:
    run = cordon_run.run_cordon(
        [FIX / "gpu-node-02.kern.log", FIX / "gpu-node-01.nvidia-smi.csv"],
        ws=None,
        evidence_dir=tmp_path / "ev",
        audit_path=tmp_path / "a.jsonl",
    )
    assert run.written is not None
    record = ev.load(run.written)
    s = Section("cordon", record.title, record, "fresh", "fresh", [])
    with speaking("ru"):
        cordon_section(s)
    assert s.title == "Состояние GPU: какие GPU выводятся из работы"
    rows = {(r[0], r[1]): r for r in s.tables[0].rows}
    assert rows[("gpu-node-02", "")][4] == "XID 79 (освободить и сбросить GPU)"
    assert rows[("gpu-node-01", "3")][3] == "закрыть для новых задач"
    assert "13,2" in rows[("gpu-node-01", "3")][4]  # the recent-half rate, Russian decimals
    # gpu-node-01's routine cordon takes the breaker's one place; gpu-node-02 (Xid 79) is let
    # through beyond it.
    assert [(r[0], r[3]) for r in s.tables[1].rows] == [
        ("gpu-node-01", "разрешено"),
        ("gpu-node-02", "пропущено: неисправимые ошибки"),
    ]


def test_the_figures_model_is_the_record_as_written(tmp_path: Path) -> None:
    """The typed figures dump to the very figures the record holds (content hash unchanged),
    commands that ran under --apply included: one that worked, one whose program is gone
    by the time it runs (gpudecide's own words stand for its output)."""
    rules = _rules_file(tmp_path, _recorder(tmp_path), max_share=1.0)
    vanishing = tmp_path / "vanishing" / "scontrol"
    vanishing.parent.mkdir()
    vanishing.write_text('#!/bin/sh\necho "ClusterName = test-cluster"\nrm -- "$0"\n')
    vanishing.chmod(0o755)
    gone = tmp_path / "gone.yaml"
    gone.write_text(f"commands:\n  scontrol: {vanishing}\nbreaker:\n  max_share: 1.0\n")
    for i, rules_path in enumerate((rules, gone)):
        run = cordon_run.run_cordon(
            [FIX / "gpu-node-02.kern.log", FIX / "gpu-node-01.nvidia-smi.csv"],
            ws=None,
            rules_path=rules_path,
            do_apply=True,
            evidence_dir=tmp_path / f"ev{i}",
            audit_path=tmp_path / f"a{i}.jsonl",
        )
        assert run.written is not None
        record = ev.load(run.written)
        typed = figures_of(record)
        assert (
            typed.model_dump(mode="json") == record.figures == run.figures.model_dump(mode="json")
        )
        again = record.model_copy(update={"figures": typed.model_dump(mode="json")})
        assert again.compute_content_sha256() == record.content_sha256
        ran = [r for n in typed.nodes for r in n.results]
        assert ran and all(r.message is None for r in ran) == (i == 0)
        assert typed.contour is not None and typed.contour.cluster == "test-cluster"
        assert typed.orchestrator == ("slurm" if i == 0 else None)
    assert ran[0].rc == 127 and ran[0].message is not None


def test_figures_of_another_shape_or_kind_is_refused(tmp_path: Path) -> None:
    """Negative: a key the producer never writes, or a record of another kind, is no cordon
    figures (the report shows such a record as damaged)."""
    run = cordon_run.run_cordon(
        [FIX / "gpu-node-02.kern.log"], ws=None, evidence_dir=tmp_path / "ev",
        audit_path=tmp_path / "a.jsonl",
    )  # fmt: skip
    assert run.written is not None
    record = ev.load(run.written)
    edited = record.model_copy(update={"figures": {**record.figures, "surprise": 1}})
    with pytest.raises(ValueError, match="surprise"):
        figures_of(edited)
    with pytest.raises(LookupError):
        figures_of(record.model_copy(update={"kind": "drill"}))
    assert isinstance(figures_of(record), CordonFigures)


# --- the option and the contour a cordon record states (SPEC G2; issue 21) ---


def _in(root: Path, *args: str) -> Any:
    cwd = Path.cwd()
    os.chdir(root)
    try:
        return CliRunner().invoke(_app(), list(args))
    finally:
        os.chdir(cwd)


def test_the_record_names_its_option_and_what_it_was_applied_to(tmp_path: Path) -> None:
    """--option (else cordon.yaml's `option`) is the option whose nodes these are; without
    --apply no scheduler was told, so `orchestrator` is null (the decision's G2 finding);
    with --apply the scheduler's cluster is stated and `orchestrator` names it."""
    root = tmp_path / "ws"
    workspace.init(root)
    kern = FIX / "gpu-node-02.kern.log"
    r = _in(root, "cordon", str(kern), "--option", "owned-pool", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["option"] == "owned-pool" and data["orchestrator"] is None
    assert data["contour"] == {
        "executor": "slurm", "cluster": "", "context": "", "host": socket.gethostname(),
        "storage": "",
    }  # fmt: skip
    assert ev.subject(ev.load(Path(data["evidence"]))) == ("cordon", "owned-pool")
    rules = root / "cordon.yaml"
    rules.write_text(
        rules.read_text()
        .replace("option: null\n", "option: rented-pool\n")
        .replace("scontrol: scontrol", f"scontrol: {_recorder(tmp_path)}")
    )
    r = _in(root, "cordon", str(kern), "--apply", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["option"] == "rented-pool" and data["orchestrator"] == "slurm"
    assert data["contour"]["cluster"] == "test-cluster"


def test_an_option_not_declared_is_bad_input(tmp_path: Path) -> None:
    """Negative twins: an undeclared id from the flag names gpudecide.yaml and --option; from
    cordon.yaml it names that file, its line and the field; nothing is written."""
    root = tmp_path / "ws"
    workspace.init(root)
    kern = str(FIX / "gpu-node-02.kern.log")
    r = _in(root, "cordon", kern, "--option", "nope")
    assert r.exit_code == 2 and "unknown option id 'nope'" in r.output and "--option" in r.output
    rules = root / "cordon.yaml"
    rules.write_text(rules.read_text().replace("option: null\n", "option: nope\n"))
    line = rules.read_text().splitlines().index("option: nope") + 1
    r = _in(root, "cordon", kern)
    assert r.exit_code == 2 and f"cordon.yaml:{line}: field 'option'" in r.output
    assert not list((root / "evidence").glob("*.json"))


def test_kubernetes_apply_states_the_context(tmp_path: Path) -> None:
    """On Kubernetes, --apply asks kubectl for its current context and states it."""
    kubectl = tmp_path / "kubectl"
    kubectl.write_text(
        '#!/bin/sh\nif [ "$1" = config ]; then echo "prod-gpu"; exit 0; fi\n'
        f'printf "%s\\n" "$*" >> {tmp_path / "calls.txt"}\n'
    )
    kubectl.chmod(0o755)
    rules = tmp_path / "k8s.yaml"
    rules.write_text(
        f"commands:\n  orchestrator: kubernetes\n  kubectl: {kubectl}\nbreaker:\n  max_share: 1\n"
    )
    run = cordon_run.run_cordon(
        [FIX / "gpu-node-02.kern.log"], ws=None, rules_path=rules, do_apply=True,
        evidence_dir=tmp_path / "ev", audit_path=tmp_path / "a.jsonl",
    )  # fmt: skip
    assert run.figures.contour is not None
    assert run.figures.contour.executor == "k8s" and run.figures.contour.context == "prod-gpu"
    assert run.figures.orchestrator == "kubernetes"
    assert (tmp_path / "calls.txt").read_text().splitlines()[0].startswith("cordon ")
