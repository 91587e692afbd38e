"""The demo bank's governance inputs and checks (fictional Dala Bank, Kazakhstan).

The demo workspace (gpudecide.yaml in `gpudecide/demo_data/`) declares its options with their
sites and a residency requirement that keeps customers' personal data in Kazakhstan (Law
No. 94-V, Art. 12(2)); its managed option in Frankfurt (managed-ft) is stopped by residency.
`run` copies raci.yaml, isolation.yaml and the documents their answers cite from
`demo_data/` beside this file into the workspace, runs every governance check and returns
the files written: the evidence records and the OSCAL assessment results.
"""

from __future__ import annotations

from pathlib import Path

from gpudecide import workspace
from gpudecide.fsutil import atomic_write_bytes
from gpudecide.governance import checks

__all__ = [
    "DATA_FILES",
    "DEMO_DATA",
    "install",
    "run",
]

DEMO_DATA = Path(__file__).parent / "demo_data"
DATA_FILES = (
    "raci.yaml",
    "isolation.yaml",
    "docs/dala-data-flow.md",
    "docs/dala-gpu-runbook.md",
    "docs/globalcloud-security-overview.md",
    "docs/qazai-offer-qac-2026-112-security.md",
    "docs/qazcloud-lease-2026-031.md",
)


def install(root: Path) -> list[Path]:
    """Write the demo's raci.yaml, isolation.yaml and cited documents into `root`."""
    written: list[Path] = []
    for rel in DATA_FILES:
        target = root / rel
        atomic_write_bytes(target, (DEMO_DATA / rel).read_bytes())
        written.append(target)
    return written


def run(ws: workspace.Workspace) -> list[Path]:
    """Install the inputs; run raci, standard-path, isolation, residency and secrets checks."""
    install(ws.root)
    written: list[Path] = []
    for run_check in (
        checks.run_raci,
        checks.run_standard_path,
        checks.run_isolation,
        checks.run_residency,
    ):
        result = run_check(ws)
        if result.written is not None:
            written.append(result.written)
        written.extend(result.extra.values())
    # The logs and configs the team feeds the tool: the job logs and the inputs just written.
    scanned = [
        p
        for p in (ws.root / "logs", ws.root / "raci.yaml", ws.root / "isolation.yaml")
        if p.exists()
    ]
    secrets = checks.run_secrets(scanned, ws)
    if secrets.written is not None:
        written.append(secrets.written)
    return written
