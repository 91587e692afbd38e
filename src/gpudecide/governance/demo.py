"""The demo bank's governance inputs and checks (fictional Dala Bank, Kazakhstan).

The demo workspace declares four options: kz-local (Qazaq AI Cloud's managed fine-tuning in
Almaty), owned-pool (the bank's own server in Almaty), managed-ft (Nimbus ML in Frankfurt)
and hybrid (owned-pool for personal data and final training, managed-ft for synthetic-data
bursts). Its residency requirement keeps personal data in Kazakhstan (Law No. 94-V, Art.
12(2)), so managed-ft is stopped by residency. `run` copies raci.yaml, isolation.yaml and
the documents they cite from the package data into the workspace, runs every check and
returns the files written: the evidence records and the OSCAL assessment results.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from gpudecide import workspace
from gpudecide.fsutil import atomic_write_bytes
from gpudecide.governance import checks

DATA_FILES = (
    "raci.yaml",
    "isolation.yaml",
    "docs/qac-offer-2026-112-security.md",
    "docs/nimbus-enterprise-security-overview.md",
    "docs/dala-gpu-runbook.md",
    "docs/dala-data-flow.md",
)

# The demo's residency requirement, for `matrix.residency` of its gpudecide.yaml.
DEMO_RESIDENCY_YAML = """\
  residency:
    - asset: "personal data"
      countries: [KZ]
      roles: [storage, processing, backup]
      basis: >-
        Law of the Republic of Kazakhstan No. 94-V "On personal data and their protection"
        of 21 May 2013, Art. 12(2): personal data kept in a database on the territory of
        the Republic of Kazakhstan
      edition: "consolidated text as published on adilet.zan.kz, read 2026-05-15"
"""


def copy_inputs(root: Path) -> list[Path]:
    """Write the demo's raci.yaml, isolation.yaml and cited documents into `root`."""
    base = resources.files("gpudecide.governance") / "data"
    written: list[Path] = []
    for rel in DATA_FILES:
        node = base
        for part in rel.split("/"):
            node = node / part
        target = root / rel
        atomic_write_bytes(target, node.read_bytes())
        written.append(target)
    return written


def run(ws: workspace.Workspace) -> list[Path]:
    """Copy the inputs, run raci, standard-path, isolation, residency and secrets checks."""
    copy_inputs(ws.root)
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
    logs = [p for p in (ws.root / "logs", ws.root / "raci.yaml") if p.exists()]
    secrets = checks.run_secrets(logs, ws)
    if secrets.written is not None:
        written.append(secrets.written)
    return written
