"""The demo bank's workspace configuration (the demo's own gpudecide.yaml) for governance tests."""

from __future__ import annotations

import re
from pathlib import Path

from gpudecide import workspace
from gpudecide.demo import CONFIG_DATA


def demo_config(residency: bool = True) -> str:
    """The demo's gpudecide.yaml; without `residency`, its requirement list emptied."""
    text = CONFIG_DATA.read_text(encoding="utf-8")
    if not residency:
        text = re.sub(r"\n  residency:\n(    .*\n?)*", "\n  residency: []\n", text)
    return text


def demo_workspace(root: Path, residency: bool = True) -> workspace.Workspace:
    """A fresh workspace with the demo bank's options, ready for the governance demo."""
    workspace.init(root)
    (root / workspace.CONFIG_NAME).write_text(demo_config(residency), encoding="utf-8")
    return workspace.load(root)
