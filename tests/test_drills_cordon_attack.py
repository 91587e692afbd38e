"""`gpudecide cordon` under attack (issue 28): commands built from untrusted telemetry, the
breaker's memory, telemetry values and cordon.yaml numbers that cannot be.

Tests by class: every source of a node name (file name, syslog host field, DCGM `Hostname`
label, `--node`) against every hostile name and both schedulers; every number field of every
telemetry format and of cordon.yaml; each rule beside a twin that must not trigger.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gpudecide.drills import cordon, cordon_rules, hostlist, nodenames, telemetry
from gpudecide.drills.cli import register
from gpudecide.errors import InputError

from .conftest import examples

FIX = Path(__file__).parent / "fixtures" / "telemetry"
SETTINGS = settings(
    max_examples=examples(120),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """The root app, as the main CLI builds it."""

    register(app)
    return app


def _scheduler(tmp_path: Path, name: str = "scontrol") -> Path:
    """A real program standing in for scontrol or kubectl: it answers the contour question
    (ClusterName, current context) and appends every other call to calls.txt."""
    script = tmp_path / name
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = show ] && [ "$2" = config ]; then echo "ClusterName = c1"; exit 0; fi\n'
        'if [ "$1" = config ]; then echo "ctx-1"; exit 0; fi\n'
        f'printf "%s\\n" "$*" >> {tmp_path / "calls.txt"}\n'
    )
    script.chmod(0o755)
    return script


def _rules(tmp_path: Path, orchestrator: str = "slurm", extra: str = "") -> Path:
    program = _scheduler(tmp_path, "kubectl" if orchestrator == "kubernetes" else "scontrol")
    key = "kubectl" if orchestrator == "kubernetes" else "scontrol"
    path = tmp_path / "cordon.yaml"
    path.write_text(
        f"breaker:\n  max_share: 1.0\n{extra}commands:\n  orchestrator: {orchestrator}\n"
        f"  {key}: {program}\n"
    )
    return path


def _cordon(tmp_path: Path, *args: str) -> Any:
    audit = tmp_path / "audit.jsonl"
    full = ["cordon", *args, "--audit", str(audit), "--evidence-dir", str(tmp_path / "ev")]
    return CliRunner().invoke(_app(), full)


def _calls(tmp_path: Path) -> list[str]:
    path = tmp_path / "calls.txt"
    return path.read_text().splitlines() if path.exists() else []


# --- node names: every source, every hostile name, both schedulers ---

XID_LINE = (
    "2026-06-03T02:14:07+05:00 {host} kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, "
    "GPU has fallen off the bus.\n"
)
DCGM_LINE = (
    'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{{gpu="0",pci_bus_id="00000000:3B:00.0",Hostname="{host}"}} 2\n'
)
HOSTILE = [
    "-l=kubernetes.io/os",
    "--selector=kubernetes.io/os=linux",
    "--server=https://evil.example:6443",
    "--kubeconfig=/tmp/evil",
    "-A",
    "gpu-[001-064]",
    "a,b,c",
    "ALL",
    "default",
    "NodeName=other",
    "x;reboot",
    "x$(id)",
    "x`id`",
    "node\x01one",
    "узел-1",
    "a" * 254,
    "-",
    ".hidden",
    "trailing-",
]


def _source_files(tmp_path: Path, source: str, host: str) -> tuple[list[str], str]:
    """Telemetry whose node name comes from `source`; the field an error names."""
    if source == "syslog host":
        path = tmp_path / "capture.kern.log"
        path.write_text(XID_LINE.format(host=host))
        return [str(path)], "host"
    if source == "Hostname label":
        path = tmp_path / "capture.dcgm.prom"
        path.write_text(DCGM_LINE.format(host=host.replace("\\", "\\\\").replace('"', '\\"')))
        return [str(path)], "Hostname"
    if source == "--node":
        path = tmp_path / "capture.txt"
        path.write_text("[183211.402117] " + XID_LINE.split("kernel: ", 1)[1])
        return [str(path), "--node", host], "--node"
    safe = host.replace("/", "_")
    path = tmp_path / f"{safe}.kern.log"
    path.write_text("[183211.402117] " + XID_LINE.split("kernel: ", 1)[1])
    return [str(path)], "file name"


SOURCES = ["syslog host", "Hostname label", "--node", "file name"]


@pytest.mark.parametrize("orchestrator", ["slurm", "kubernetes"])
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("host", HOSTILE)
def test_a_hostile_node_name_is_refused_before_any_command(
    tmp_path: Path, orchestrator: str, source: str, host: str
) -> None:
    """Whatever the source, a name that is not one node of the scheduler is exit 2 naming
    where it came from, and nothing runs, nothing is written."""
    if source == "file name" and (host.startswith((".", "-")) or "\x01" in host or len(host) > 200):
        pytest.skip("not a file name a file system keeps as a node prefix")
    if source == "syslog host" and (" " in host or "\x01" in host):
        pytest.skip("white space ends the syslog host field")
    files, field = _source_files(tmp_path, source, host)
    rules = _rules(tmp_path, orchestrator)
    r = _cordon(tmp_path, *files, "--rules", str(rules), "--apply")
    # Slurm names may end in '-' ("trailing-"), and "default" is a name to Kubernetes: the
    # rule is each scheduler's own.
    if nodenames.problem(host, orchestrator) is None:  # type: ignore[arg-type]
        assert r.exit_code == 0, r.output
        return
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1
    assert f"'{field}'" in r.output, r.output
    assert _calls(tmp_path) == []
    assert not (tmp_path / "audit.jsonl").exists() and not (tmp_path / "ev").exists()


@pytest.mark.parametrize("orchestrator", ["slurm", "kubernetes"])
@pytest.mark.parametrize("source", SOURCES)
def test_a_good_node_name_goes_after_the_double_dash(
    tmp_path: Path, orchestrator: str, source: str
) -> None:
    """Twin: a plain node name from any source reaches the scheduler as one argument after
    `--`, never before it."""
    files, _field = _source_files(tmp_path, source, "gpu-node-17")
    rules = _rules(tmp_path, orchestrator)
    r = _cordon(tmp_path, *files, "--rules", str(rules), "--apply")
    assert r.exit_code == 0, r.output
    calls = _calls(tmp_path)
    assert calls, r.output
    for call in calls:
        words = call.split(" ")
        assert "--" in words and "gpu-node-17" not in " ".join(words[: words.index("--")])
    if orchestrator == "slurm":
        assert len(calls) == 1
        assert calls[0].startswith(
            "-- update NodeName=gpu-node-17 State=DRAIN Reason=gpudecide drain-and-reset: GPU "
        )
    else:
        assert calls[0] == "cordon -- gpu-node-17"
        assert calls[1] == "taint nodes --overwrite -- gpu-node-17 gpudecide.io/gpu-health=" \
            "drain-and-reset:NoExecute"  # fmt: skip


@SETTINGS
@given(st.text(max_size=80), st.sampled_from(["slurm", "kubernetes"]))
def test_every_accepted_name_is_one_node_and_no_option(name: str, orchestrator: str) -> None:
    """Property: a name the check lets through never starts like an option, holds no
    separator, bracket, `=` or control character, and is exactly one Slurm node; every
    command built from it keeps it after `--`."""
    if nodenames.problem(name, orchestrator) is not None:  # type: ignore[arg-type]
        with pytest.raises(InputError):
            nodenames.check(name, orchestrator)  # type: ignore[arg-type]
        return
    assert name and not name.startswith("-") and name.isascii() and name.isprintable()
    assert not any(c in name for c in " ,[]=\t\n;$`'\"\\/")
    assert hostlist.expand(name) == [name]
    rules = cordon_rules.CordonRules.model_validate({"commands": {"orchestrator": orchestrator}})
    for argv in cordon.node_commands(name, "replace", "why", rules):
        cut = argv.index("--")
        assert name not in argv[:cut]
        assert name in argv[cut:] or f"NodeName={name}" in argv[cut:]


def test_the_scheduler_reason_is_one_printable_line() -> None:
    """A rule's own `why` (cordon.yaml) with newlines and control characters becomes one
    printable Reason= line of at most 200 characters."""
    reason = cordon.scheduler_reason("cordon", "line one\nState=RESUME\x07 " + "x" * 400)
    assert reason.isprintable() and "\n" not in reason and len(reason) <= 200
    assert reason.startswith("gpudecide cordon: line one State=RESUME x")


# --- hostlists: counted as the nodes they stand for ---


def test_hostlists_expand_as_slurm_writes_them() -> None:
    assert hostlist.expand("gpu-[001-003],a b") == ["gpu-001", "gpu-002", "gpu-003", "a", "b"]
    assert hostlist.expand("tux[0-1]x[1-2]") == ["tux0x1", "tux0x2", "tux1x1", "tux1x2"]
    assert hostlist.expand("x[7-10]") == ["x7", "x8", "x9", "x10"]
    assert hostlist.expand("x[07-10]") == ["x07", "x08", "x09", "x10"]
    assert hostlist.count("gpu-[001-064]") == 64 and hostlist.count("a,,b") == 2
    for bad in ("n[3-1]", "n[a-c]", "n[1-2,]", "n[]", "n[1-3", "n]", "n[[1]]", "n[1-70000]"):
        with pytest.raises(hostlist.HostlistError):
            hostlist.expand(bad)
    assert hostlist.is_single("gpu-node-01") and not hostlist.is_single("gpu-[01-02]")


def _slurm_up() -> bool:
    try:
        done = subprocess.run(
            ["scontrol", "show", "hostnames", "a"], capture_output=True, text=True, timeout=10
        )
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return False
    return done.stdout.strip() == "a"


RANGE = st.tuples(st.integers(0, 40), st.integers(0, 6), st.integers(0, 3)).map(
    lambda t: f"{t[0]:0{t[2]}d}" + (f"-{t[0] + t[1]}" if t[1] else "")
)
HOSTLISTS = st.lists(
    st.tuples(
        st.sampled_from(["gpu", "n", "rack-a", "x1y"]),
        st.lists(st.lists(RANGE, min_size=1, max_size=3), max_size=2),
    ),
    min_size=1,
    max_size=3,
).map(
    lambda parts: ",".join(
        prefix + "".join(f"[{','.join(r)}]" + ("x" if i < len(rs) - 1 else "") for i, r in
                         enumerate(rs))
        for prefix, rs in parts
    )
)  # fmt: skip


@pytest.mark.slurm
@settings(max_examples=examples(40), deadline=None)
@given(HOSTLISTS)
def test_hostlist_expansion_matches_scontrol(text: str) -> None:
    """The expansion is Slurm's own: `scontrol show hostnames` on the real local Slurm."""
    if not _slurm_up():
        if os.environ.get("GPUDECIDE_REQUIRE_SLURM") == "1":
            pytest.fail("GPUDECIDE_REQUIRE_SLURM=1 but scontrol does not answer")
        pytest.skip("no scontrol")
    done = subprocess.run(
        ["scontrol", "show", "hostnames", text], capture_output=True, text=True, timeout=10
    )
    expected = done.stdout.split()
    if "Invalid" in done.stdout + done.stderr:
        return
    assert hostlist.expand(text) == expected


# --- the breaker's memory: the audit trail ---


def _rising(tmp_path: Path, node: str) -> Path:
    """A node whose GPU's corrected errors rise past the cordon threshold (routine)."""
    path = tmp_path / f"{node}.nvidia-smi.csv"
    path.write_text((FIX / "gpu-node-01.nvidia-smi.csv").read_text())
    return path


def _memory_rules(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "cordon.yaml"
    path.write_text(
        f"breaker:\n  max_share: 0.25\n  fleet_nodes: 8\n{extra}commands:\n"
        f"  scontrol: {_scheduler(tmp_path)}\n"
    )
    return path


def test_successive_runs_never_take_out_more_than_one_run_may(tmp_path: Path) -> None:
    """8 nodes, share 0.25: 2 routine cordons within the window. Run 1 takes n1 and n2; run 2
    with n3 and n4 finds them in the audit trail and holds both back (exit 1)."""
    rules = _memory_rules(tmp_path)
    first = [str(_rising(tmp_path, n)) for n in ("n1", "n2")]
    r = _cordon(tmp_path, *first, "--rules", str(rules), "--apply")
    assert r.exit_code == 0, r.output
    second = [str(_rising(tmp_path, n)) for n in ("n3", "n4")]
    r = _cordon(tmp_path, *second, "--rules", str(rules), "--apply", "--json")
    assert r.exit_code == 1, r.output
    data = json.loads(r.output)
    assert {n["node"]: n["breaker"] for n in data["nodes"]} == {"n3": "held", "n4": "held"}
    assert any(
        "2 nodes already out from earlier runs within 24 h: n1, n2" in n for n in data["notes"]
    )
    assert [c.split()[2] for c in _calls(tmp_path)] == ["NodeName=n1", "NodeName=n2"]


def test_an_old_drain_no_longer_counts(tmp_path: Path) -> None:
    """Twin: the same two drains 25 hours back are outside the 24 h window: room again."""
    rules = _memory_rules(tmp_path)
    old = (datetime.now(UTC) - timedelta(hours=25)).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = [
        {"at": old, "node": n, "phase": "result", "applied": True, "results": [{"rc": 0}]}
        for n in ("n1", "n2")
    ]
    (tmp_path / "audit.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    files = [str(_rising(tmp_path, n)) for n in ("n3", "n4")]
    r = _cordon(tmp_path, *files, "--rules", str(rules), "--apply")
    assert r.exit_code == 0, r.output
    assert len(_calls(tmp_path)) == 2


@pytest.mark.parametrize(
    ("named", "held"),
    [
        ("gpu-[001-064]", True),  # an older run's hostlist: 64 nodes, not one
        ("a,b", True),  # two nodes: both places of 8 x 0.25
        ("-l=kubernetes.io/os", True),  # no node at all: the whole fleet
        ("a", False),  # twin: one node, one place left
    ],
)
def test_an_earlier_entry_counts_as_the_nodes_it_names(
    tmp_path: Path, named: str, held: bool
) -> None:
    """An audit line an older version wrote with a hostlist counts its nodes; one naming no
    node (a selector) counts as the whole fleet, and the note says which line."""
    rules = _memory_rules(tmp_path)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    line = {"at": now, "node": named, "applied": True, "results": [{"rc": 0}]}
    (tmp_path / "audit.jsonl").write_text(json.dumps(line) + "\n")
    r = _cordon(tmp_path, str(_rising(tmp_path, "n3")), "--rules", str(rules), "--apply", "--json")
    data = json.loads(r.output)
    assert data["nodes"][0]["breaker"] == ("held" if held else "allowed")
    assert r.exit_code == (1 if held else 0), r.output
    if named.startswith("-"):
        assert any("audit line 1 names -l=kubernetes.io/os" in n for n in data["notes"])


def test_a_run_killed_after_its_intent_still_counts(tmp_path: Path) -> None:
    """An intent line without its result (the run died between the two) counts as out."""
    rules = _memory_rules(tmp_path)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = [
        {"at": now, "run": "r1", "phase": "intent", "node": n, "applied": True}
        for n in ("n1", "n2")
    ]
    (tmp_path / "audit.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = _cordon(tmp_path, str(_rising(tmp_path, "n3")), "--rules", str(rules), "--apply")
    assert r.exit_code == 1 and _calls(tmp_path) == []


def test_a_drain_that_failed_takes_no_place(tmp_path: Path) -> None:
    """Twin: a result line whose drain was refused (rc 1) took nothing out."""
    rules = _memory_rules(tmp_path)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = [
        {"at": now, "node": n, "phase": "result", "applied": True, "results": [{"rc": 1}]}
        for n in ("n1", "n2")
    ]
    (tmp_path / "audit.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = _cordon(tmp_path, str(_rising(tmp_path, "n3")), "--rules", str(rules), "--apply")
    assert r.exit_code == 0, r.output


def test_uncorrectable_drains_take_no_place_of_routine_ones(tmp_path: Path) -> None:
    """Two earlier drains for uncorrectable errors (let through) leave the routine share
    whole: the next routine cordon still goes."""
    rules = _memory_rules(tmp_path)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = [
        {"at": now, "node": n, "phase": "result", "applied": True, "results": [{"rc": 0}],
         "breaker": "bypassed", "uncorrectable": True}
        for n in ("n1", "n2")
    ]  # fmt: skip
    (tmp_path / "audit.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = _cordon(tmp_path, str(_rising(tmp_path, "n3")), "--rules", str(rules), "--apply")
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize(
    "line",
    ["{not json", '["a list"]', '{"at": "2026-13-01T00:00:00Z", "node": "n1"}', '{"at": "x"}'],
)
def test_an_unreadable_audit_line_is_bad_input(tmp_path: Path, line: str) -> None:
    """The breaker does not guess what an unreadable trail held: exit 2 naming its line."""
    rules = _memory_rules(tmp_path)
    (tmp_path / "audit.jsonl").write_text(
        '{"at": "2026-06-01T00:00:00Z", "node": "n0"}\n' + line + "\n"
    )
    r = _cordon(tmp_path, str(_rising(tmp_path, "n3")), "--rules", str(rules), "--apply")
    assert r.exit_code == 2 and "audit.jsonl:2" in r.output, r.output
    assert _calls(tmp_path) == []


def _read_only_folder(tmp_path: Path) -> Path:
    """A folder nobody can write to, root included: a read-only tmpfs (else mode 0555 for a
    user that is not root)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return folder
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a read-only tmpfs here")
    return folder


def test_an_audit_trail_that_cannot_be_written_stops_the_action(tmp_path: Path) -> None:
    """The trail first, the scheduler after: a read-only trail folder is exit 2 and scontrol
    never runs; a folder, a FIFO or a device as the trail likewise."""
    rules = _rules(tmp_path)
    kern = str(FIX / "gpu-node-02.kern.log")
    folder = _read_only_folder(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    try:
        for trail in (folder / "cordon.jsonl", tmp_path, fifo, Path("/dev/null")):
            args = ["cordon", kern, "--rules", str(rules), "--apply", "--audit", str(trail)]
            r = CliRunner().invoke(_app(), [*args, "--evidence-dir", str(tmp_path / "ev")])
            assert r.exit_code == 2, (trail, r.output)
            assert "Traceback" not in r.output and _calls(tmp_path) == []
            assert not (tmp_path / "ev").exists()
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(folder)], check=False)
        else:
            folder.chmod(0o755)


def test_a_writable_trail_lets_the_action_run(tmp_path: Path) -> None:
    """Twin: the same command with a writable trail drains the node."""
    rules = _rules(tmp_path)
    r = _cordon(tmp_path, str(FIX / "gpu-node-02.kern.log"), "--rules", str(rules), "--apply")
    assert r.exit_code == 0 and len(_calls(tmp_path)) == 1


def test_an_evidence_folder_that_cannot_be_written_stops_the_action(tmp_path: Path) -> None:
    rules = _rules(tmp_path)
    folder = _read_only_folder(tmp_path)
    try:
        args = ["cordon", str(FIX / "gpu-node-02.kern.log"), "--rules", str(rules), "--apply"]
        args += ["--audit", str(tmp_path / "a.jsonl"), "--evidence-dir", str(folder / "ev")]
        r = CliRunner().invoke(_app(), args)
        assert r.exit_code == 2 and _calls(tmp_path) == [], r.output
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(folder)], check=False)


# --- telemetry values that cannot be: every number field of every format ---

SMI_HEADER = (
    "timestamp, index, pci.bus_id, ecc.errors.corrected.volatile.total, "
    "ecc.errors.uncorrected.volatile.total, ecc.errors.corrected.aggregate.total, "
    "ecc.errors.uncorrected.aggregate.total, retired_pages.sbe, retired_pages.dbe, "
    "retired_pages.pending"
)
SMI_GOOD = ["2026/06/02 03:00:00.000", "0", "00000000:18:00.0", "5", "0", "5", "0", "0", "0", "No"]
COUNTS = ["-1", "-0.5", "nan", "NaN", "inf", "-Infinity", "1e400", "18446744073709551617", "12abc"]
INDEXES = ["-1", "1.5", "1024", "99999999999999999999", "nan", "x"]
SMI_TIMES = ["2026/13/02 03:00:00.000", "-1199/06/02 03:00:00", "1999/12/31 23:59:59.000",
             "2100/01/01 00:00:00.000", "2026/06/02 25:00:00"]  # fmt: skip


def _smi(tmp_path: Path, column: int, value: str) -> Path:
    row = list(SMI_GOOD)
    row[column] = value
    path = tmp_path / "n1.nvidia-smi.csv"
    path.write_text(f"{SMI_HEADER}\n{', '.join(SMI_GOOD)}\n{', '.join(row)}\n")
    return path


def _bad_values(column: str) -> list[str]:
    if column == "timestamp":
        return SMI_TIMES
    if column == "index":
        return INDEXES
    return COUNTS


SMI_CASES = [
    (i, name.strip(), v)
    for i, name in enumerate(SMI_HEADER.split(","))
    if name.strip() != "pci.bus_id"
    for v in _bad_values(name.strip())
]


@pytest.mark.parametrize(("column", "name", "value"), SMI_CASES)
def test_every_nvidia_smi_number_that_cannot_be(
    tmp_path: Path, column: int, name: str, value: str
) -> None:
    path = _smi(tmp_path, column, value)
    with pytest.raises(InputError) as exc:
        telemetry.read_all([path])
    assert exc.value.path == str(path) and exc.value.line == 3, exc.value
    assert exc.value.field == name


def test_nvidia_smi_readings_that_can_be(tmp_path: Path) -> None:
    """Twin: zero, large counts, N/A and [Not Supported] are readings (N/A is none)."""
    fine = [(3, "0"), (3, "18446744073709551615"), (3, "[N/A]"), (4, "[Not Supported]"),
            (1, "1023"), (0, "2099/12/31 23:59:59")]  # fmt: skip
    for column, value in fine:
        assert telemetry.read_all([_smi(tmp_path, column, value)]).samples


DCGM_FIELDS_BAD = [(f, v) for f in telemetry.DCGM_FIELDS for v in COUNTS]


@pytest.mark.parametrize(("metric", "value"), DCGM_FIELDS_BAD)
def test_every_dcgm_value_that_cannot_be(tmp_path: Path, metric: str, value: str) -> None:
    path = tmp_path / "n1.dcgm.prom"
    path.write_text(f'# HELP x\n{metric}{{gpu="0",Hostname="n1"}} {value}\n')
    with pytest.raises(InputError) as exc:
        telemetry.read_all([path])
    assert exc.value.path == str(path) and exc.value.line == 2


@pytest.mark.parametrize(
    ("labels", "stamp", "field"),
    [
        ('gpu="-1"', "", "gpu"),
        ('gpu="1e3"', "", "gpu"),
        ('gpu="4096"', "", "gpu"),
        ('gpu="0"', "-1", "timestamp"),
        ('gpu="0"', "99999999999999999999", "timestamp"),
        ('gpu="0"', "1.5e12", "timestamp"),
        ('gpu="0"', "NaN", "timestamp"),
    ],
)
def test_dcgm_labels_and_times_that_cannot_be(
    tmp_path: Path, labels: str, stamp: str, field: str
) -> None:
    path = tmp_path / "n1.dcgm.prom"
    path.write_text(f'DCGM_FI_DEV_ECC_SBE_VOL_TOTAL{{{labels},Hostname="n1"}} 3 {stamp}\n')
    with pytest.raises(InputError) as exc:
        telemetry.read_all([path])
    assert (exc.value.line, exc.value.field) == (1, field)


@pytest.mark.parametrize("value", ["79.5", "-79", "nan", "inf", "10000"])
def test_a_dcgm_last_xid_that_cannot_be(tmp_path: Path, value: str) -> None:
    path = tmp_path / "n1.dcgm.prom"
    path.write_text(f'DCGM_FI_DEV_XID_ERRORS{{gpu="0",Hostname="n1"}} {value}\n')
    with pytest.raises(InputError) as exc:
        telemetry.read_all([path])
    assert exc.value.line == 1


def test_dcgm_readings_that_can_be(tmp_path: Path) -> None:
    """Twin: a last Xid of 0 is none (DCGM's word for no Xid); 79 is an Xid 79 event."""
    path = tmp_path / "n1.dcgm.prom"
    path.write_text(
        'DCGM_FI_DEV_XID_ERRORS{gpu="0",Hostname="n1"} 0 1780441200000\n'
        'DCGM_FI_DEV_XID_ERRORS{gpu="1",Hostname="n1"} 79\n'
    )
    data = telemetry.read_all([path])
    assert [(e.index, e.xid) for e in data.xids] == [(1, 79)]


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("GPU -1   0   0", "GPU"),
        ("GPU 1e2  0   0", "GPU"),
        ("GPU 0   -3   0", "ESVTL"),
        ("GPU 0   0    nan", "EDVTL"),
        ("GPU 0   inf  0", "ESVTL"),
    ],
)
def test_dmon_values_that_cannot_be(tmp_path: Path, line: str, field: str) -> None:
    path = tmp_path / "n1.dmon.txt"
    path.write_text(f"#Entity   ESVTL   EDVTL\nID\n{line}\n")
    with pytest.raises(InputError) as exc:
        telemetry.read_all([path])
    assert (exc.value.line, exc.value.field) == (3, field)


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("2026-06-03T02:14:07+05:00 n1 kernel: NVRM: Xid (PCI:0000:3b:00): 0, pid=1", "xid"),
        ("2026-06-03T02:14:07+05:00 n1 kernel: NVRM: Xid (PCI:0000:3b:00): 10000, x", "xid"),
        (f"2026-06-03T02:14:07+05:00 n1 kernel: NVRM: Xid (PCI:0000:3b:00): {'9' * 30}, x", "xid"),
        ("2026-13-03T02:14:07+05:00 n1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, x", "time"),
        ("-1199-06-03T02:14:07+05:00 n1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, x", "time"),
        ("1969-06-03T02:14:07+05:00 n1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, x", "time"),
        ("2026-06-03T99:14:07+05:00 n1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, x", "time"),
    ],
)
def test_kernel_log_values_that_cannot_be(tmp_path: Path, line: str, field: str) -> None:
    path = tmp_path / "n1.kern.log"
    path.write_text("2026-06-03T02:00:00+05:00 n1 kernel: booted\n" + line + "\n")
    with pytest.raises(InputError) as exc:
        telemetry.read_all([path])
    assert (exc.value.line, exc.value.field) == (2, field), exc.value


def test_kernel_log_values_that_can_be(tmp_path: Path) -> None:
    """Twin: Xid 1 and 9999, journalctl's +0500 offset, a dmesg line without a time."""
    path = tmp_path / "n1.kern.log"
    path.write_text(
        "2026-06-03T02:14:07+0500 n1 kernel: NVRM: Xid (PCI:0000:3b:00): 1, x\n"
        "2026-06-03T02:14:08Z n1 kernel: NVRM: Xid (PCI:0000:3b:00): 9999, x\n"
        "[183211.402117] NVRM: Xid (PCI:0000:18:00): 13, pid=2\n"
    )
    assert [e.xid for e in telemetry.read_all([path]).xids] == [1, 9999, 13]


def test_a_fifo_a_device_or_a_folder_as_telemetry_is_bad_input(tmp_path: Path) -> None:
    """One line, exit 2, never a hang; a folder given is read (its files), and a FIFO found
    inside it is named in a note, not read."""
    fifo = tmp_path / "n1.kern.log"
    os.mkfifo(fifo)
    for target in (fifo, Path("/dev/zero")):
        r = _cordon(tmp_path, str(target))
        assert r.exit_code == 2 and "Traceback" not in r.output, r.output
        assert str(target) in r.output
    folder = tmp_path / "tel"
    folder.mkdir()
    shutil.copy(FIX / "gpu-node-02.kern.log", folder)
    os.mkfifo(folder / "n9.kern.log")
    r = _cordon(tmp_path, str(folder), "--json")
    assert r.exit_code == 0, r.output
    assert any(
        "n9.kern.log: not a regular file, not read" in n for n in json.loads(r.output)["notes"]
    )


def test_a_csv_with_a_nul_byte_is_read_or_refused_never_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "n1.nvidia-smi.csv"
    path.write_bytes(b"index, pci.bus_id\n0, 00000000:18:00.0\x00\n\x00\n")
    try:
        data = telemetry.read_all([path])
    except InputError as exc:
        assert exc.path == str(path)
    else:
        assert [s.bus for s in data.samples] == ["0000:18:00"]


TELEMETRY_SEEDS = [
    (FIX / name).read_text() for name in sorted(os.listdir(FIX))
]  # fmt: skip


@SETTINGS
@given(
    st.sampled_from(TELEMETRY_SEEDS),
    st.integers(0, 10_000),
    st.text(max_size=40),
    st.sampled_from([".kern.log", ".nvidia-smi.csv", ".dcgm.prom", ".dmon.txt", ".txt"]),
)
# an Xid line whose syslog host was cut off, in a file whose name names no node
@example(seed=(FIX / "gpu-node-02.kern.log").read_text(), at=0, cut=":", suffix=".txt")
def test_telemetry_readers_never_crash(seed: str, at: int, cut: str, suffix: str) -> None:
    """Any text spliced into a real capture: telemetry, or one InputError with a location;
    never another exception."""
    import tempfile

    pos = at % (len(seed) + 1)
    text = seed[:pos] + cut + seed[pos + len(cut) // 2 :]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"n1{suffix}"
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        try:
            data = telemetry.read_all([path])
        except InputError as exc:
            assert exc.path is not None and "\n" not in exc.one_line()
            return
        for s in data.samples:
            assert all(math.isfinite(v) and v >= 0 for v in s.metrics.values())
            assert s.index is None or 0 <= s.index <= telemetry.MAX_GPU_INDEX
        assert all(1 <= e.xid <= telemetry.MAX_XID for e in data.xids)
        result = cordon.decide(data, cordon_rules.CordonRules())
        assert all(nodenames.problem(p.node, "slurm") is None for p in result.nodes)


# --- cordon.yaml: every number field, and the ones that only make sense together ---


def _numbers(model: type[Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every numeric field of the rules, by its path (lists: their first item)."""
    from typing import get_args, get_origin

    from pydantic import BaseModel

    out: list[tuple[str, ...]] = []
    for name, info in model.model_fields.items():
        kind = info.annotation
        if get_origin(kind) is list:
            inner = get_args(kind)[0]
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                out.extend(_numbers(inner, (*prefix, name, "0")))
            else:
                out.append((*prefix, name, "0"))
            continue
        args = [a for a in get_args(kind) if a is not type(None)] or [kind]
        for arg in args:
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                out.extend(_numbers(arg, (*prefix, name)))
            elif arg in (int, float) and name != "version":
                out.append((*prefix, name))
    return out


RULE_NUMBERS = _numbers(cordon_rules.CordonRules)


def test_the_number_fields_are_all_found() -> None:
    """The walk sees every number of cordon.yaml (a new one is tested without being listed)."""
    assert {".".join(p) for p in RULE_NUMBERS} >= {
        "xid.0.xid", "xid.0.replace_after", "corrected_errors.window_hours",
        "corrected_errors.watch_per_hour", "corrected_errors.cordon_per_hour",
        "corrected_errors.min_samples", "memory.replace_retired_pages", "breaker.max_share",
        "breaker.fleet_nodes", "breaker.window_hours", "breaker.uncorrectable_xids.0",
    }  # fmt: skip


def _yaml_with(path: tuple[str, ...], value: str) -> str:
    """cordon.yaml setting one field (in lists: the first item, a whole valid entry)."""
    if path[0] == "xid":
        entry = {"xid": "79", "action": "replace", "why": "x"}
        entry[path[2]] = value
        body = ", ".join(f"{k}: {v}" for k, v in entry.items())
        return f"xid:\n  - {{{body}}}\n"
    if path[-1] == "0":
        return f"{path[0]}:\n  {path[1]}: [{value}]\n"
    return f"{path[0]}:\n  {path[1]}: {value}\n"


@pytest.mark.parametrize("field", RULE_NUMBERS, ids=".".join)
@pytest.mark.parametrize("value", ["-1", "0", "1e20", "true", ".nan", ".inf", "'7'", "{}"])
def test_every_rule_number_that_cannot_be(
    tmp_path: Path, field: tuple[str, ...], value: str
) -> None:
    path = tmp_path / "cordon.yaml"
    path.write_text(_yaml_with(field, value))
    with pytest.raises(InputError) as exc:
        cordon_rules.load(path)
    assert exc.value.path == str(path) and exc.value.line is not None
    assert "\n" not in exc.value.one_line()


@pytest.mark.parametrize("field", RULE_NUMBERS, ids=".".join)
def test_every_rule_number_has_a_value_it_takes(tmp_path: Path, field: tuple[str, ...]) -> None:
    """Twin: a plausible value of each field loads."""
    value = {"max_share": "0.5", "window_hours": "48", "xid": "79"}.get(field[-1], "3")
    if field[-1] == "0":
        value = "79"
    path = tmp_path / "cordon.yaml"
    path.write_text(_yaml_with(field, value))
    cordon_rules.load(path)


def test_a_watch_threshold_above_the_cordon_one_is_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "cordon.yaml"
    path.write_text("corrected_errors:\n  watch_per_hour: 12\n  cordon_per_hour: 10\n")
    with pytest.raises(InputError) as exc:
        cordon_rules.load(path)
    assert (exc.value.line, exc.value.field) == (2, "corrected_errors.watch_per_hour")
    path.write_text("corrected_errors:\n  watch_per_hour: 10\n  cordon_per_hour: 10\n")
    assert cordon_rules.load(path).corrected_errors.cordon_per_hour == 10  # twin: equal is fine


def test_two_rules_for_one_xid_are_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "cordon.yaml"
    path.write_text(
        "xid:\n  - {xid: 79, action: replace, why: a}\n  - {xid: 79, action: ok, why: b}\n"
    )
    with pytest.raises(InputError) as exc:
        cordon_rules.load(path)
    assert (exc.value.line, exc.value.field) == (3, "xid.1.xid")


@pytest.mark.parametrize("key", ["-l=x", "a b", "gpudecide.io/", "x" * 70, "UPPER.io/ok"])
def test_a_taint_key_that_is_no_label_key_is_bad_input(tmp_path: Path, key: str) -> None:
    path = tmp_path / "cordon.yaml"
    path.write_text(f"commands:\n  taint_key: '{key}'\n")
    with pytest.raises(InputError) as exc:
        cordon_rules.load(path)
    assert exc.value.field == "commands.taint_key"


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_cordon_yaml_that_is_no_regular_file_is_bad_input(tmp_path: Path, kind: str) -> None:
    """A workspace's cordon.yaml that is a FIFO, a device or a folder is refused by name,
    never read as "absent" (issue 28: the defaults ran, exit 0)."""
    from gpudecide import workspace

    root = tmp_path / "ws"
    workspace.init(root)
    target = root / "cordon.yaml"
    target.unlink()
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "device":
        target.symlink_to("/dev/zero")
    else:
        target.mkdir()
    cwd = Path.cwd()
    os.chdir(root)
    try:
        r = CliRunner().invoke(_app(), ["cordon", str(FIX / "gpu-node-02.kern.log")])
    finally:
        os.chdir(cwd)
    assert r.exit_code == 2 and "cordon.yaml" in r.output and "Traceback" not in r.output
    assert stat.S_ISDIR((root / "evidence").stat().st_mode)
    assert not list((root / "evidence").glob("*.json"))


def test_a_dcgm_line_without_its_hostname(tmp_path: Path) -> None:
    """A line whose Hostname label is missing is the file's one host; in a file naming
    several hosts it is nobody's: bad input naming its line."""
    one = tmp_path / "dump.prom"
    one.write_text(
        'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu="0",Hostname="n1"} 0\n'
        'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu="1"} 2\n'
    )
    assert {s.node for s in telemetry.read_all([one]).samples} == {"n1"}
    two = tmp_path / "dumps.prom"
    two.write_text(one.read_text() + 'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu="0",Hostname="n2"} 0\n')
    with pytest.raises(InputError) as exc:
        telemetry.read_all([two])
    assert (exc.value.line, exc.value.field) == (2, "Hostname")


def test_an_xid_line_without_its_host_is_the_one_node_the_file_names(tmp_path: Path) -> None:
    """A kernel log line whose syslog host was cut off belongs to the one host the other
    lines name; where they name two, the line is refused with its number."""
    lines = (FIX / "gpu-node-02.kern.log").read_text().splitlines(keepends=True)
    xid = next(i for i, ln in enumerate(lines) if "NVRM: Xid" in ln)
    cut = lines[xid].split(" kernel: ", 1)[1]
    path = tmp_path / "capture.txt"  # a name that names no node
    path.write_text("".join([*lines[:xid], "kernel: " + cut, *lines[xid + 1 :]]))
    data = telemetry.read_all([path])
    assert data.xids and {e.node for e in data.xids} == {"gpu-node-02"}
    other = lines[xid].replace("gpu-node-02", "gpu-node-03", 1)
    path.write_text("".join([*lines[:xid], "kernel: " + cut, other, *lines[xid + 1 :]]))
    with pytest.raises(InputError) as raised:
        telemetry.read_all([path])
    assert raised.value.line == xid + 1
    assert "cannot tell which node" in str(raised.value)
