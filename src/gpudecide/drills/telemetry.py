"""GPU health telemetry as the tools print it, read into samples and Xid events (SPEC G2, G3).

Four formats, recognised by their content:

- `nvidia-smi --query-gpu=index,pci.bus_id,serial,ecc.errors.corrected.volatile.total,...
  --format=csv` (header line `index, pci.bus_id, ...`; a `timestamp` column, as `-l N` loops
  print it, turns the file into a time series) and `nvidia-smi --query-remapped-rows=
  gpu_bus_id,remapped_rows.correctable,... --format=csv`;
- dcgm-exporter text (`DCGM_FI_DEV_ECC_SBE_VOL_TOTAL{gpu="0",pci_bus_id="..."} 12 1717380847000`,
  the optional last number being the Prometheus sample time in milliseconds);
- `dcgmi dmon -e ...` tables (`#Entity   ESVTL   EDVTL`, then `ID`, then `GPU 0   0   0`);
- kernel logs with `NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus.`
  (dmesg, syslog or `journalctl -k -o short-iso` lines).

The node a file describes comes from the syslog host field, else from the file name
(`NODE.nvidia-smi.csv`, `NODE.kern.log`, `NODE.dcgm.prom`, `NODE.dmon.txt`), else from the
`--node` given. Every sample keeps the file and line it came from: the cordon decision
quotes them as its evidence.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from gpudecide.errors import InputError
from gpudecide.message import Message, english, message

__all__ = [
    "DCGM_FIELDS",
    "DMON_TAGS",
    "FILE_SUFFIXES",
    "SMI_COLUMNS",
    "Line",
    "Sample",
    "Telemetry",
    "XidEvent",
    "detect",
    "node_from_name",
    "normalise_bus",
    "read_all",
    "read_dcgm_exporter",
    "read_dmon",
    "read_file",
    "read_kernel_log",
    "read_smi_csv",
]

# Canonical metric names, with the spellings each tool uses for them.
SMI_COLUMNS: dict[str, str] = {
    "ecc.errors.corrected.volatile.total": "sbe_volatile",
    "ecc.errors.uncorrected.volatile.total": "dbe_volatile",
    "ecc.errors.corrected.aggregate.total": "sbe_aggregate",
    "ecc.errors.uncorrected.aggregate.total": "dbe_aggregate",
    "retired_pages.sbe": "retired_sbe",
    "retired_pages.single_bit_ecc.count": "retired_sbe",
    "retired_pages.dbe": "retired_dbe",
    "retired_pages.double_bit.count": "retired_dbe",
    "retired_pages.pending": "retired_pending",
    "remapped_rows.correctable": "remap_correctable",
    "remapped_rows.uncorrectable": "remap_uncorrectable",
    "remapped_rows.pending": "remap_pending",
    "remapped_rows.failure": "remap_failure",
}
DCGM_FIELDS: dict[str, str] = {
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": "sbe_volatile",
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": "dbe_volatile",
    "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL": "sbe_aggregate",
    "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL": "dbe_aggregate",
    "DCGM_FI_DEV_RETIRED_SBE": "retired_sbe",
    "DCGM_FI_DEV_RETIRED_DBE": "retired_dbe",
    "DCGM_FI_DEV_RETIRED_PENDING": "retired_pending",
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": "remap_correctable",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": "remap_uncorrectable",
    "DCGM_FI_DEV_ROW_REMAP_PENDING": "remap_pending",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": "remap_failure",
    "DCGM_FI_DEV_XID_ERRORS": "xid_last",
}
# `dcgmi dmon` column tags of the same fields (DCGM's field table, short names).
DMON_TAGS: dict[str, str] = {"ESVTL": "sbe_volatile", "EDVTL": "dbe_volatile"}
DMON_TAGS.update({"ESATL": "sbe_aggregate", "EDATL": "dbe_aggregate"})

FILE_SUFFIXES = (
    ".nvidia-smi.csv",
    ".remapped-rows.csv",
    ".kern.log",
    ".dmesg.log",
    ".syslog",
    ".dcgm.prom",
    ".dcgm.txt",
    ".dmon.txt",
)
_NOT_A_VALUE = {"", "n/a", "[n/a]", "[not supported]", "not supported", "[unknown error]"}

_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})"
    r"(?:\.[0-7])?\): (?P<xid>\d+),\s*(?P<rest>.*)$"
)
_SYSLOG_ISO = re.compile(
    r"^(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?) (?P<host>\S+) kernel:"
)
_SYSLOG_BSD = re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d (?P<host>\S+) kernel:")
_PROM = re.compile(
    r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>[^}]*)\})?\s+(?P<value>\S+)"
    r"(?:\s+(?P<ts>-?\d+))?\s*$"
)
_LABEL = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class Line:
    """Where a reading came from: file, line number and the line as it was."""

    path: str
    line: int
    text: str

    def cite(self) -> str:
        """`file:line: text`, as the decision quotes it."""
        return f"{self.path}:{self.line}: {self.text.strip()}"


@dataclass
class Sample:
    """One GPU's counters at one time (time None: the source printed none)."""

    node: str
    bus: str | None
    index: int | None
    time: datetime | None
    metrics: dict[str, float]
    source: Line
    serial: str | None = None


@dataclass
class XidEvent:
    """One `NVRM: Xid` line of a kernel log (or a DCGM_FI_DEV_XID_ERRORS reading)."""

    node: str
    bus: str | None
    index: int | None
    xid: int
    detail: str
    time: datetime | None
    source: Line


@dataclass
class Telemetry:
    """Everything read from the telemetry files."""

    samples: list[Sample] = field(default_factory=list)
    xids: list[XidEvent] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    note_messages: list[Message] = field(default_factory=list)

    @property
    def notes(self) -> list[str]:
        """The notes in English."""
        return [english(m) for m in self.note_messages]


def normalise_bus(text: str | None) -> str | None:
    """PCI bus id in one spelling: `0000:3b:00` (domain, bus, device; lower case).

    nvidia-smi prints `00000000:3B:00.0`, the kernel `PCI:0000:3b:00`: both become the same.
    """
    if not text:
        return None
    m = re.search(r"([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})", text)
    if m is None:
        return None
    return f"{m.group(1)[-4:]}:{m.group(2)}:{m.group(3)}".lower()


def node_from_name(path: Path) -> str | None:
    """`gpu-node-07.kern.log` -> `gpu-node-07`; None when the name follows no known pattern."""
    name = path.name
    for suffix in FILE_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def _value(text: str) -> float | None:
    t = text.strip().lower()
    if t in _NOT_A_VALUE:
        return None
    if t in ("yes", "true", "enabled"):
        return 1.0
    if t in ("no", "false", "disabled"):
        return 0.0
    try:
        return float(t.split()[0])
    except ValueError:
        return None


def _smi_time(text: str, path: Path, line: int) -> datetime:
    for fmt in ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S"):
        try:
            return datetime.strptime(text.strip(), fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise InputError(
        "timestamp {value!r} is not as nvidia-smi prints it (YYYY/MM/DD HH:MM:SS.mmm)",
        path=path,
        line=line,
        field="timestamp",
        value=text.strip(),
    )


def _header(cell: str) -> str:
    """`memory.used [MiB]` -> `memory.used`: nvidia-smi adds units to some headers."""
    return cell.strip().split(" [")[0]


def read_smi_csv(path: Path, text: str, node: str) -> list[Sample]:
    """`nvidia-smi --query-gpu=... --format=csv` or `--query-remapped-rows=...` output."""
    rows = list(csv.reader(io.StringIO(text)))
    header = [_header(c) for c in rows[0]]
    bus_col = next((i for i, h in enumerate(header) if h in ("pci.bus_id", "gpu_bus_id")), None)
    if bus_col is None and "index" not in header:
        raise InputError(
            "nvidia-smi CSV without an index or pci.bus_id column",
            path=path,
            line=1,
            hint="query index,pci.bus_id first: --query-gpu=index,pci.bus_id,...",
        )
    idx_col = header.index("index") if "index" in header else None
    ts_col = header.index("timestamp") if "timestamp" in header else None
    serial_col = header.index("serial") if "serial" in header else None
    wanted = {i: SMI_COLUMNS[h] for i, h in enumerate(header) if h in SMI_COLUMNS}
    lines = text.splitlines()
    samples = []
    for n, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise InputError(
                "values in the row: {got}, columns in the header: {want}",
                path=path,
                line=n,
                got=len(row),
                want=len(header),
            )
        metrics = {name: v for i, name in wanted.items() if (v := _value(row[i])) is not None}
        index = None
        if idx_col is not None:
            try:
                index = int(row[idx_col])
            except ValueError:
                raise InputError(
                    "GPU index {value!r} is not a number",
                    path=path,
                    line=n,
                    field="index",
                    value=row[idx_col].strip(),
                ) from None
        samples.append(
            Sample(
                node=node,
                bus=normalise_bus(row[bus_col]) if bus_col is not None else None,
                index=index,
                time=_smi_time(row[ts_col], path, n) if ts_col is not None else None,
                metrics=metrics,
                source=Line(str(path), n, lines[n - 1] if n - 1 < len(lines) else ""),
                serial=row[serial_col].strip() if serial_col is not None else None,
            )
        )
    return samples


def read_dcgm_exporter(path: Path, text: str, node: str | None) -> tuple[list[Sample], str | None]:
    """dcgm-exporter text: one sample per metric line; the Hostname label names the node."""
    samples: list[Sample] = []
    host = None
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _PROM.match(line)
        if m is None or m.group("name") not in DCGM_FIELDS:
            continue
        labels = dict(_LABEL.findall(m.group("labels") or ""))
        value = _value(m.group("value"))
        if value is None:
            continue
        host = labels.get("Hostname") or host
        gpu = labels.get("gpu")
        ts = m.group("ts")
        samples.append(
            Sample(
                node=labels.get("Hostname") or node or "",
                bus=normalise_bus(labels.get("pci_bus_id")),
                index=int(gpu) if gpu and gpu.isdigit() else None,
                time=datetime.fromtimestamp(int(ts) / 1000, UTC) if ts else None,
                metrics={DCGM_FIELDS[m.group("name")]: value},
                source=Line(str(path), n, raw),
            )
        )
    return samples, host


def read_dmon(path: Path, text: str, node: str) -> tuple[list[Sample], list[str]]:
    """`dcgmi dmon -e ...` table: rows `GPU N  v1  v2 ...` under a `#Entity` header.

    Returns the samples and the columns it had that are not used."""
    tags: list[str] = []
    samples: list[Sample] = []
    unknown: set[str] = set()
    for n, raw in enumerate(text.splitlines(), start=1):
        parts = raw.split()
        if not parts:
            continue
        if parts[0] == "#Entity":
            tags = parts[1:]
            unknown |= {t for t in tags if t not in DMON_TAGS}
            continue
        if parts[0] != "GPU" or len(parts) < 2 or not parts[1].isdigit():
            continue
        values = parts[2:]
        metrics = {
            DMON_TAGS[t]: v
            for t, cell in zip(tags, values, strict=False)
            if t in DMON_TAGS and (v := _value(cell)) is not None
        }
        samples.append(Sample(node, None, int(parts[1]), None, metrics, Line(str(path), n, raw)))
    return samples, sorted(unknown)


def read_kernel_log(path: Path, text: str, node: str | None) -> tuple[list[XidEvent], str | None]:
    """Xid lines of a kernel log; the syslog host field, when present, names the node."""
    events = []
    host = None
    for n, raw in enumerate(text.splitlines(), start=1):
        m = _XID.search(raw)
        if m is None:
            continue
        when = None
        line_host = None
        iso = _SYSLOG_ISO.match(raw)
        if iso is not None:
            line_host = iso.group("host")
            when = datetime.fromisoformat(iso.group("ts").replace("Z", "+00:00"))
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
        else:
            bsd = _SYSLOG_BSD.match(raw)
            # BSD syslog prints no year: the time is shown, never used for windows.
            line_host = bsd.group("host") if bsd is not None else None
        host = line_host or host
        events.append(
            XidEvent(
                node=line_host or node or "",
                bus=normalise_bus(m.group("bus")),
                index=None,
                xid=int(m.group("xid")),
                detail=m.group("rest").strip(),
                time=when,
                source=Line(str(path), n, raw),
            )
        )
    return events, host


def detect(text: str) -> str | None:
    """Which of the four formats a file is in (None: none of them)."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    cols = [_header(c) for c in first.split(",")]
    if any(c in ("index", "pci.bus_id", "gpu_bus_id", "timestamp") for c in cols) and (
        "," in first
    ):
        return "nvidia-smi"
    if first.startswith("#Entity"):
        return "dmon"
    if "NVRM: Xid" in text:
        return "kernel"
    if re.search(r"^DCGM_FI_\w+(\{|\s)", text, re.M):
        return "dcgm-exporter"
    if "kernel:" in text or re.match(r"^\[\s*\d+\.\d+\]", first):
        return "kernel"
    return None


def read_file(path: Path, node: str | None = None) -> Telemetry:
    """Read one telemetry file of any supported format."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except IsADirectoryError:
        raise InputError("is a directory, not a telemetry file", path=path) from None
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    kind = detect(text)
    named = node_from_name(path) or node
    out = Telemetry(files=[path])
    if kind is None:
        raise InputError(
            "not nvidia-smi CSV, dcgm-exporter text, dcgmi dmon output or a kernel log",
            path=path,
            line=1,
            hint="see `gpudecide cordon --help` for the formats read",
        )
    if kind == "kernel":
        out.xids, host = read_kernel_log(path, text, named)
        if host is None and named is None and out.xids:
            raise _no_node(path)
        return out
    if kind == "dcgm-exporter":
        out.samples, host = read_dcgm_exporter(path, text, named)
        if host is None and named is None and out.samples:
            raise _no_node(path)
        for s in out.samples:
            if s.metrics.get("xid_last"):
                xid = int(s.metrics["xid_last"])
                out.xids.append(
                    XidEvent(
                        s.node, s.bus, s.index, xid, "DCGM_FI_DEV_XID_ERRORS", s.time, s.source
                    )
                )
        return out
    if named is None:
        raise _no_node(path)
    if kind == "dmon":
        out.samples, unknown = read_dmon(path, text, named)
        if unknown:
            out.note_messages = [
                message("drills", "{path}: dmon columns not used: {cols}", path=str(path),
                        cols=unknown)
            ]  # fmt: skip
    else:
        out.samples = read_smi_csv(path, text, named)
    return out


def _no_node(path: Path) -> InputError:
    return InputError(
        "cannot tell which node this telemetry is from",
        path=path,
        hint="name the file NODE.nvidia-smi.csv / NODE.kern.log / NODE.dcgm.prom, or pass --node",
    )


def read_all(paths: list[Path], node: str | None = None) -> Telemetry:
    """Read every file (a folder: every file in it, sorted)."""
    out = Telemetry()
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files.extend(
                sorted(q for q in p.iterdir() if q.is_file() and not q.name.startswith("."))
            )
        else:
            files.append(p)
    for p in files:
        one = read_file(p, node)
        out.samples.extend(one.samples)
        out.xids.extend(one.xids)
        out.files.extend(one.files)
        out.note_messages.extend(one.note_messages)
    return out
