"""The demo bank's options and residency requirement as a gpudecide.yaml, for governance tests."""

from __future__ import annotations

from pathlib import Path

from gpudecide import workspace
from gpudecide.governance.demo import DEMO_RESIDENCY_YAML

DEMO_OPTIONS_YAML = """\
options:
  - id: kz-local
    kind: managed
    name: "Local provider, managed fine-tuning (Kazakhstan)"
    local_provider: true
    sites:
      - {roles: [storage, processing], country: KZ, region: Almaty, provider: "Qazaq AI Cloud"}
      - {roles: [backup], country: KZ, region: Astana, provider: "Qazaq AI Cloud"}
  - id: owned-pool
    kind: owned
    name: "Owned 8xH100 server, Almaty DC"
    sites:
      - {roles: [storage, processing], country: KZ, region: Almaty, provider: "Dala Bank DC"}
      - {roles: [backup], country: KZ, region: Astana, provider: "Dala Bank backup site"}
  - id: managed-ft
    kind: managed
    name: "Managed fine-tuning endpoint"
    sites:
      - {roles: [storage, processing, backup], country: DE, region: Frankfurt,
         provider: "Nimbus ML"}
  - id: hybrid
    kind: hybrid
    name: "Owned pool + managed bursts"
    contours: [owned-pool, managed-ft]
"""


def demo_config(residency: bool = True) -> str:
    """gpudecide.yaml text of the demo bank (options; the residency requirement if asked)."""
    text = 'version: 1\nteam: "Dala Bank (fictional)"\n' + DEMO_OPTIONS_YAML
    if residency:
        text += "matrix:\n" + DEMO_RESIDENCY_YAML
    return text


def demo_workspace(root: Path, residency: bool = True) -> workspace.Workspace:
    """A fresh workspace with the demo bank's options, ready for the governance demo."""
    workspace.init(root)
    (root / workspace.CONFIG_NAME).write_text(demo_config(residency), encoding="utf-8")
    return workspace.load(root)
