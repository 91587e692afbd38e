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
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from gpudecide.drills.nodenames import Orchestrator, check
from gpudecide.errors import InputError, excerpt
from gpudecide.fsutil import read_regular
from gpudecide.message import Message, english, message
from gpudecide.textlines import split_lines

__all__ = [
    "DCGM_FIELDS",
    "DMON_TAGS",
    "FILE_SUFFIXES",
    "MAX_COUNT",
    "MAX_GPU_INDEX",
    "MAX_TELEMETRY_BYTES",
    "MAX_XID",
    "SMI_COLUMNS",
    "YEARS",
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
# What a reading can be (issue 28: a negative counter, a NaN Xid, the year -1199 are no
# readings of any GPU; each is refused with its file and line, never computed with).
MAX_COUNT = 2**64 - 1  # the counters are unsigned 64-bit
MAX_GPU_INDEX = 1023  # far above any node's GPUs (DCGM tracks 32 at most)
MAX_XID = 9999  # NVIDIA's Xids run from 1 (the catalogue ends below 200)
YEARS = (2000, 2099)  # no GPU telemetry predates ECC reporting on GPUs
# A kernel log or a capture of months stays far below this; a larger file is a mistake.
MAX_TELEMETRY_BYTES = 512 << 20

_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})"
    r"(?:\.[0-7])?\): (?P<xid>\d+),\s*(?P<rest>.*)$"
)
# A syslog / journalctl short-iso line: the time, the host, `kernel:`. The time is matched
# loosely (a sign, any digits) so that a time that cannot be is caught, not skipped.
_SYSLOG_ISO = re.compile(r"^(?P<ts>[+-]?\d+-\d+-\d+T\S+) (?P<host>\S+) kernel:")
_SYSLOG_BSD = re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d (?P<host>\S+) kernel:")
_PROM = re.compile(
    r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>[^}]*)\})?\s+(?P<value>\S+)"
    r"(?:\s+(?P<ts>\S+))?\s*$"
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


def _reading(text: str, path: Path, line: int, field: str) -> float | None:
    """A counter or flag as a tool prints it: a finite number from 0 to 2^64, `Yes`/`No`,
    or none (`N/A`, `[Not Supported]`); anything else cannot be a reading (InputError)."""
    t = text.strip().lower()
    if t in _NOT_A_VALUE:
        return None
    if t in ("yes", "true", "enabled", "active"):
        return 1.0
    if t in ("no", "false", "disabled", "inactive"):
        return 0.0
    token = t.split()[0]
    try:
        # Whole numbers exactly (a float would round 2^64 + 1 down to 2^64).
        value: float = int(token) if token.isdigit() else float(token)
    except (ValueError, OverflowError):
        value = math.nan
    if isinstance(value, int) and value <= MAX_COUNT:
        return float(value)
    if isinstance(value, float) and math.isfinite(value) and 0 <= value <= MAX_COUNT:
        return value
    raise InputError(
        "{value} cannot be a reading of {metric}",
        path=path,
        line=line,
        field=field,
        hint="a counter is a finite number from 0 up; `N/A` where the GPU reports none",
        value=excerpt(text.strip(), 24),
        metric=field,
    )


def _index(text: str, path: Path, line: int, field: str) -> int:
    """A GPU's index on its node: a whole number from 0 to MAX_GPU_INDEX."""
    value = text.strip()
    if value.isdigit() and value.isascii() and int(value) <= MAX_GPU_INDEX:
        return int(value)
    raise InputError(
        "GPU index {value} cannot be: indexes run from 0 to {max}",
        path=path,
        line=line,
        field=field,
        value=excerpt(value, 24),
        max=MAX_GPU_INDEX,
    )


def _year_ok(when: datetime, path: Path, line: int, field: str, shown: str) -> datetime:
    if YEARS[0] <= when.year <= YEARS[1]:
        return when
    raise InputError(
        "time {value} lies outside {first}-{last}: no GPU reported it",
        path=path,
        line=line,
        field=field,
        hint="check the clock of the node, or the column the time was read from",
        value=excerpt(shown, 32),
        first=YEARS[0],
        last=YEARS[1],
    )


def _smi_time(text: str, path: Path, line: int) -> datetime:
    for fmt in ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S"):
        try:
            when = datetime.strptime(text.strip(), fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
        return _year_ok(when, path, line, "timestamp", text.strip())
    raise InputError(
        "timestamp {value!r} is not as nvidia-smi prints it (YYYY/MM/DD HH:MM:SS.mmm)",
        path=path,
        line=line,
        field="timestamp",
        value=text.strip(),
    )


def _iso_time(text: str, path: Path, line: int) -> datetime:
    """A syslog / journalctl ISO 8601 time; month 13 or the year -1199 are no times."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(
            "time {value} is not a date and time (ISO 8601, as syslog and journalctl -o "
            "short-iso print it)",
            path=path,
            line=line,
            field="time",
            value=excerpt(text, 32),
        ) from None
    when = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return _year_ok(when, path, line, "time", text)


def _millis(text: str, path: Path, line: int) -> datetime:
    """A Prometheus sample time: milliseconds since 1970, within YEARS."""
    try:
        ms = int(text)
    except ValueError:
        ms = None
    low = datetime(YEARS[0], 1, 1, tzinfo=UTC).timestamp() * 1000
    high = datetime(YEARS[1], 12, 31, 23, 59, 59, tzinfo=UTC).timestamp() * 1000
    if ms is None or not low <= ms <= high:
        raise InputError(
            "sample time {value} is not milliseconds within {first}-{last}",
            path=path,
            line=line,
            field="timestamp",
            hint="dcgm-exporter prints the time in milliseconds since 1970, or none",
            value=excerpt(text, 24),
            first=YEARS[0],
            last=YEARS[1],
        )
    return datetime.fromtimestamp(ms / 1000, UTC)


def _xid(text: str, path: Path, line: int, *, none_is_zero: bool = False) -> int | None:
    """An Xid number: 1 to MAX_XID (DCGM's last-Xid field reads 0 for none)."""
    value = text.strip()
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if none_is_zero and number == 0:
        return None
    if math.isfinite(number) and number == int(number) and 1 <= number <= MAX_XID:
        return int(number)
    raise InputError(
        "Xid {value} cannot be: Xids are whole numbers from 1 to {max}",
        path=path,
        line=line,
        field="xid",
        value=excerpt(value, 24),
        max=MAX_XID,
    )


def _header(cell: str) -> str:
    """`memory.used [MiB]` -> `memory.used`: nvidia-smi adds units to some headers."""
    return cell.strip().split(" [")[0]


def _csv_rows(path: Path, text: str) -> list[list[str]]:
    try:
        return list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise InputError(
            "not CSV as nvidia-smi writes it: {reason}", path=path, reason=str(exc)
        ) from None


def read_smi_csv(path: Path, text: str, node: str) -> list[Sample]:
    """`nvidia-smi --query-gpu=... --format=csv` or `--query-remapped-rows=...` output."""
    rows = _csv_rows(path, text)
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
    lines = split_lines(text)
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
        metrics = {
            name: v
            for i, name in wanted.items()
            if (v := _reading(row[i], path, n, header[i])) is not None
        }
        samples.append(
            Sample(
                node=node,
                bus=normalise_bus(row[bus_col]) if bus_col is not None else None,
                index=_index(row[idx_col], path, n, "index") if idx_col is not None else None,
                time=_smi_time(row[ts_col], path, n) if ts_col is not None else None,
                metrics=metrics,
                source=Line(str(path), n, lines[n - 1] if n - 1 < len(lines) else ""),
                serial=row[serial_col].strip() if serial_col is not None else None,
            )
        )
    return samples


def read_dcgm_exporter(
    path: Path, text: str, node: str | None, orchestrator: Orchestrator = "slurm"
) -> tuple[list[Sample], str | None]:
    """dcgm-exporter text: one sample per metric line; the Hostname label names the node
    (a label that is no node of the scheduler is refused with its line)."""
    samples: list[Sample] = []
    host = None
    for n, raw in enumerate(split_lines(text), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _PROM.match(line)
        if m is None or m.group("name") not in DCGM_FIELDS:
            continue
        labels = dict(_LABEL.findall(m.group("labels") or ""))
        metric = DCGM_FIELDS[m.group("name")]
        value = _reading(m.group("value"), path, n, m.group("name"))
        if value is None:
            continue
        named = labels.get("Hostname")
        if named is not None:
            host = check(named, orchestrator, path=path, line=n, field="Hostname")
        gpu = labels.get("gpu")
        ts = m.group("ts")
        samples.append(
            Sample(
                node=named or node or "",
                bus=normalise_bus(labels.get("pci_bus_id")),
                index=_index(gpu, path, n, "gpu") if gpu is not None else None,
                time=_millis(ts, path, n) if ts else None,
                metrics={metric: value},
                source=Line(str(path), n, raw),
            )
        )
    # A line without its Hostname label is the file's node: the one its name or --node
    # gives, else the one host its other lines name; with several, nobody can tell.
    hosts = {x.node for x in samples if x.node}
    for x in samples:
        if not x.node:
            if node is None and len(hosts) > 1:
                raise InputError(
                    "cannot tell which node this line is from: it has no Hostname label and "
                    "the file names several",
                    path=path,
                    line=x.source.line,
                    field="Hostname",
                )
            x.node = node or next(iter(hosts), "")
    return samples, host


def read_dmon(path: Path, text: str, node: str) -> tuple[list[Sample], list[str]]:
    """`dcgmi dmon -e ...` table: rows `GPU N  v1  v2 ...` under a `#Entity` header.

    Returns the samples and the columns it had that are not used."""
    tags: list[str] = []
    samples: list[Sample] = []
    unknown: set[str] = set()
    for n, raw in enumerate(split_lines(text), start=1):
        parts = raw.split()
        if not parts:
            continue
        if parts[0] == "#Entity":
            tags = parts[1:]
            unknown |= {t for t in tags if t not in DMON_TAGS}
            continue
        if parts[0] != "GPU" or len(parts) < 2:
            continue
        index = _index(parts[1], path, n, "GPU")
        values = parts[2:]
        metrics = {
            DMON_TAGS[t]: v
            for t, cell in zip(tags, values, strict=False)
            if t in DMON_TAGS and (v := _reading(cell, path, n, t)) is not None
        }
        samples.append(Sample(node, None, index, None, metrics, Line(str(path), n, raw)))
    return samples, sorted(unknown)


def read_kernel_log(
    path: Path, text: str, node: str | None, orchestrator: Orchestrator = "slurm"
) -> list[XidEvent]:
    """Xid lines of a kernel log; the syslog host field, when present, names the node (a host
    that is no node of the scheduler is refused with its line)."""
    events = []
    for n, raw in enumerate(split_lines(text), start=1):
        m = _XID.search(raw)
        if m is None:
            continue
        when = None
        line_host = None
        iso = _SYSLOG_ISO.match(raw)
        if iso is not None:
            line_host = iso.group("host")
            when = _iso_time(iso.group("ts"), path, n)
        else:
            bsd = _SYSLOG_BSD.match(raw)
            # BSD syslog prints no year: the time is shown, never used for windows.
            line_host = bsd.group("host") if bsd is not None else None
        if line_host is not None:
            check(line_host, orchestrator, path=path, line=n, field="host")
        xid = _xid(m.group("xid"), path, n)
        assert xid is not None
        events.append(
            XidEvent(
                node=line_host or node or "",
                bus=normalise_bus(m.group("bus")),
                index=None,
                xid=xid,
                detail=m.group("rest").strip(),
                time=when,
                source=Line(str(path), n, raw),
            )
        )
    # An Xid line without the syslog host (a line cut or merged) is the file's node: the one
    # its name or --node gives, else the one host its other lines name; else nobody can tell.
    hosts = {e.node for e in events if e.node}
    for e in events:
        if not e.node:
            if len(hosts) != 1:
                raise _no_node(path, e.source.line)
            e.node = next(iter(hosts))
    return events


def detect(text: str) -> str | None:
    """Which of the four formats a file is in (None: none of them)."""
    first = next((ln.strip() for ln in split_lines(text) if ln.strip()), "")
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


def read_file(
    path: Path, node: str | None = None, orchestrator: Orchestrator = "slurm"
) -> Telemetry:
    """Read one telemetry file of any supported format: a regular file (a FIFO, a device or
    a folder is refused by name), every value one a GPU can report, every node name one
    node of the scheduler."""
    text = read_regular(path, MAX_TELEMETRY_BYTES).decode("utf-8", errors="replace")
    kind = detect(text)
    from_name = node_from_name(path)
    if from_name is not None:
        check(from_name, orchestrator, path=path, field="file name")
    named = from_name or node
    out = Telemetry(files=[path])
    if kind is None:
        raise InputError(
            "not nvidia-smi CSV, dcgm-exporter text, dcgmi dmon output or a kernel log",
            path=path,
            line=1,
            hint="see `gpudecide cordon --help` for the formats read",
        )
    if kind == "kernel":
        # an Xid line that no name, --node or host field places is refused there, at its line
        out.xids = read_kernel_log(path, text, named, orchestrator)
        return out
    if kind == "dcgm-exporter":
        out.samples, host = read_dcgm_exporter(path, text, named, orchestrator)
        if host is None and named is None and out.samples:
            raise _no_node(path)
        for s in out.samples:
            if "xid_last" in s.metrics:
                xid = _xid(f"{s.metrics['xid_last']:g}", path, s.source.line, none_is_zero=True)
                if xid is not None:
                    out.xids.append(
                        XidEvent(
                            s.node, s.bus, s.index, xid, "DCGM_FI_DEV_XID_ERRORS", s.time,
                            s.source,
                        )
                    )  # fmt: skip
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


def _no_node(path: Path, line: int | None = None) -> InputError:
    return InputError(
        "cannot tell which node this telemetry is from",
        path=path,
        line=line,
        hint="name the file NODE.nvidia-smi.csv / NODE.kern.log / NODE.dcgm.prom, or pass --node",
    )


def read_all(
    paths: list[Path], node: str | None = None, orchestrator: Orchestrator = "slurm"
) -> Telemetry:
    """Read every file (a folder: every regular file in it, sorted; a FIFO, device or socket
    there is named in a note and left unread). `node` (`--node`) must be one node of the
    scheduler too."""
    if node is not None:
        check(node, orchestrator, field="--node")
    out = Telemetry()
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            for q in sorted(p.iterdir()):
                if q.name.startswith(".") or q.is_dir():
                    continue
                if q.is_file():
                    files.append(q)
                else:
                    out.note_messages.append(
                        message("drills", "{path}: not a regular file, not read", path=str(q))
                    )
        else:
            files.append(p)
    for p in files:
        one = read_file(p, node, orchestrator)
        out.samples.extend(one.samples)
        out.xids.extend(one.xids)
        out.files.extend(one.files)
        out.note_messages.extend(one.note_messages)
    return out
