"""Where a drill or a cordon ran, as its record states it (`figures["contour"]`, SPEC G1, G2).

The decision grades a drill by the option's declared contour (`gpudecide.decision.contour`):
the executor, the Slurm cluster, the Kubernetes context, the host and the storage its
checkpoints went to. The drills and `cordon --apply` ask the scheduler itself for the
cluster's name (`scontrol show config`: ClusterName) or the context (`kubectl config
current-context`); a scheduler that does not answer is a problem they name, never an empty
field filled in by guess. A storage URL is stated without user information: no credential
ever reaches a record.
"""

from __future__ import annotations

import re
import socket
import subprocess
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from gpudecide.drills.figures import Figure
from gpudecide.errors import InputError

__all__ = [
    "ASK_TIMEOUT_S",
    "Answer",
    "Contour",
    "Executor",
    "ask_kubernetes",
    "ask_slurm",
    "shown_storage",
    "this_host",
]

# The executors a drill or a cordon record names (the decision's words: `k8s`, not
# `kubernetes`).
Executor = Literal["local", "slurm", "k8s"]
# A scheduler that answers at all answers in seconds; a hung controller must not hang us.
ASK_TIMEOUT_S = 15.0
_CLUSTER = re.compile(r"^\s*ClusterName\s*=\s*(\S+)\s*$", re.M)


class Contour(Figure):
    """`figures["contour"]`: what a record exercised, every key written."""

    executor: Executor
    cluster: str = ""
    context: str = ""
    host: str = ""
    storage: str = ""


@dataclass(frozen=True)
class Answer:
    """A scheduler's answer: the name asked for, or why there is none.

    `problem` is one of `missing` (the program is not there), `timeout`, `failed` (it
    exited non-zero: `said` holds its own last line) or `unnamed` (it answered without
    the name)."""

    name: str | None
    program: str
    problem: Literal["missing", "timeout", "failed", "unnamed"] | None = None
    said: str = ""

    def error(self, *, field: str, path: str | None = None, line: int | None = None) -> InputError:
        """The problem as the one-line error of a command that needs the scheduler."""
        hint = "start the scheduler, or check that {program} reaches it"
        if self.problem == "missing":
            return InputError(
                "{program} not found", field=field, path=path, line=line, hint=hint,
                program=self.program,
            )  # fmt: skip
        if self.problem == "timeout":
            return InputError(
                "{program} gave no answer in {seconds} s", field=field, path=path, line=line,
                hint=hint, program=self.program, seconds=f"{ASK_TIMEOUT_S:g}",
            )  # fmt: skip
        if self.problem == "unnamed":
            return InputError(
                "{program} answered without naming the cluster or context", field=field,
                path=path, line=line, hint=hint, program=self.program,
            )  # fmt: skip
        return InputError(
            "{program} does not answer: {said}", field=field, path=path, line=line, hint=hint,
            program=self.program, said=self.said,
        )  # fmt: skip


def _ask(argv: list[str]) -> Answer | str:
    """The command's output, or the Answer that says why there is none."""
    program = argv[0]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=ASK_TIMEOUT_S, check=False
        )
    except FileNotFoundError:
        return Answer(None, program, "missing")
    except subprocess.TimeoutExpired:
        return Answer(None, program, "timeout")
    except OSError as exc:
        return Answer(None, program, "failed", exc.strerror or str(exc))
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        return Answer(
            None, program, "failed", (said[-1] if said else f"exit {done.returncode}")[:300]
        )
    return done.stdout


def ask_slurm(scontrol: str = "scontrol") -> Answer:
    """The Slurm cluster's name from the controller (`scontrol show config`: ClusterName);
    a controller that does not answer is the answer's problem."""
    out = _ask([scontrol, "show", "config"])
    if isinstance(out, Answer):
        return out
    found = _CLUSTER.search(out)
    return Answer(found.group(1), scontrol) if found else Answer(None, scontrol, "unnamed")


def ask_kubernetes(kubectl: str = "kubectl") -> Answer:
    """The kubeconfig's current context (`kubectl config current-context`)."""
    out = _ask([kubectl, "config", "current-context"])
    if isinstance(out, Answer):
        return out
    name = out.strip()
    return Answer(name, kubectl) if name else Answer(None, kubectl, "unnamed")


def this_host() -> str:
    """The host gpudecide runs on, as it names itself."""
    return socket.gethostname()


def shown_storage(url: str | None) -> str:
    """A storage URL as a record states it: without user information (`user:secret@`);
    none (checkpoints on the node's own disk) is empty."""
    if not url:
        return ""
    if "://" not in url:
        return url
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
