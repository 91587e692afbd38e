"""A node name from telemetry, checked against the scheduler's own naming rules (issue 28).

Telemetry is text anyone with a shell on a node can write: a syslog host field, a DCGM
`Hostname` label, a file name. `cordon --apply` puts the node's name into a scheduler
command, so a name is only ever one node of the scheduler's:

- Kubernetes: a node name is an RFC 1123 DNS subdomain (Kubernetes' `ValidateNodeName`):
  at most 253 characters of lower-case letters, digits, `-` and `.`, each dot-separated
  label starting and ending with a letter or digit. `-l=kubernetes.io/os` (a selector of
  every node) or `--kubeconfig=/tmp/x` (credentials sent elsewhere) are no names.
- Slurm: a name is read as a hostlist (`hostlist`): `gpu-[001-064]` or `a,b,c` are many
  nodes; a separator, a bracket, `=` or white space never belongs to one name. A name here
  is letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 253
  characters, and not a word slurm.conf reserves (`ALL`, `DEFAULT`).

`problem` says what is wrong, as an InputError for the place the name came from; the
commands also pass the name after `--` (kubectl) or behind `--` (scontrol), so that even a
name that slipped through would never be read as an option.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from gpudecide.drills import hostlist
from gpudecide.errors import InputError, excerpt

__all__ = [
    "MAX_NAME",
    "SLURM_RESERVED",
    "Orchestrator",
    "check",
    "problem",
]

Orchestrator = Literal["slurm", "kubernetes"]
MAX_NAME = 253
SLURM_RESERVED = frozenset({"ALL", "DEFAULT"})
_DNS_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_KUBERNETES = re.compile(rf"{_DNS_LABEL}(?:\.{_DNS_LABEL})*")
_SLURM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_SHOWN = 48


def problem(name: str, orchestrator: Orchestrator) -> tuple[str, str, dict[str, object]] | None:
    """None when `name` is one node of the scheduler; else (template, hint, values)."""
    shown = excerpt(name, _SHOWN)
    if orchestrator == "kubernetes":
        if len(name) <= MAX_NAME and _KUBERNETES.fullmatch(name):
            return None
        return (
            "node {node} is not a Kubernetes node name",
            "a node name is an RFC 1123 subdomain: lower-case letters, digits, '-' and '.', "
            "each part starting and ending with a letter or digit, at most 253 characters",
            {"node": shown},
        )
    if name.upper() in SLURM_RESERVED:
        return (
            "node {node} is a word Slurm reserves, not a node",
            "ALL and DEFAULT stand for many nodes in Slurm: name the node itself",
            {"node": shown},
        )
    if len(name) <= MAX_NAME and _SLURM.fullmatch(name):
        return None
    try:
        many = hostlist.count(name)
    except hostlist.HostlistError:
        many = None
    if many is not None and many > 1:
        return (
            "node {node} is a Slurm hostlist of {count} nodes, not one node",
            "telemetry describes one node: name the file NODE.kern.log, or pass --node",
            {"node": shown, "count": many},
        )
    return (
        "node {node} is not a Slurm node name",
        "a node name is letters, digits, '.', '_' and '-', starting with a letter or digit, at "
        "most 253 characters",
        {"node": shown},
    )


def check(
    name: str,
    orchestrator: Orchestrator,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    field: str | None = None,
) -> str:
    """`name` when it is one node of the scheduler; else the InputError naming where the name
    came from (file, line, field: `Hostname`, `host`, `--node`, the file's name)."""
    found = problem(name, orchestrator)
    if found is None:
        return name
    template, hint, values = found
    raise InputError(template, path=path, line=line, field=field, hint=hint, **values)
