"""The demo's job log: 8 weeks of a fictional bank's Slurm accounting (`sacct --parsable2`).

The log is a data file in the package (`demo_data/sacct-8w.txt`), generated once by
`scripts/make_demo_data.py`; the demo copies it into its workspace and profiles it.
"""

from __future__ import annotations

from pathlib import Path

from gpudecide.fsutil import atomic_write_bytes
from gpudecide.jobs.log_command import Loaded
from gpudecide.jobs.profile import ProfileResult
from gpudecide.jobs.profile_run import run_profile

__all__ = [
    "LOG",
    "LOG_DATA",
    "install",
    "run",
]

LOG_DATA = Path(__file__).parent / "demo_data" / "sacct-8w.txt"
LOG = "logs/sacct-8w.txt"


def install(root: Path) -> None:
    """Copy the demo log into the workspace at `logs/sacct-8w.txt`."""
    atomic_write_bytes(root / LOG, LOG_DATA.read_bytes())


def run(loaded: Loaded) -> tuple[ProfileResult, Path | None]:
    """Profile the demo log as `gpudecide profile` would in the workspace."""
    return run_profile(loaded)
