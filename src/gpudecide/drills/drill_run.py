"""`gpudecide drill NAME|all` as a library call: run drills, write journals and evidence (G1-G4).

Defaults come from the workspace's `drills.yaml` (the option drilled, storage, executor);
flags override it. Without a workspace, drills run under `./drills/` and write evidence to
`./evidence/`. With the local executor every job of the game day forks from one warm
zygote (`gpudecide.portability.zygote`), so torch is imported once, not once per job.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, cast

import yaml
from pydantic import BaseModel, ConfigDict, Field

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.drills import (
    checkpoint_corrupt,
    disk_full,
    gpu_delay,
    node_loss,
    runner,
    storage_revoked,
    storage_url,
)
from gpudecide.drills.audit import writable_folder
from gpudecide.drills.contour import ask_slurm
from gpudecide.drills.journal import stopped_by_signals
from gpudecide.drills.launch import drill_zygote
from gpudecide.drills.names import DRILLS, MARKS_FOLDER
from gpudecide.drills.runner import DrillContext, DrillResult
from gpudecide.errors import InputError
from gpudecide.inputs import load_yaml, node_line, validate_model
from gpudecide.jobs.log_command import workspace_logs
from gpudecide.marks.lifecycle import lifecycles
from gpudecide.options import require_known
from gpudecide.queue.restarts import RestartsFigures, restarts_from_zero

__all__ = [
    "CONFIG_NAME",
    "EXECUTORS",
    "MAX_TIMEOUT_S",
    "RUNNERS",
    "DrillConfig",
    "DrillRun",
    "executor_of",
    "job_lifecycles",
    "load_config",
    "log_restarts",
    "names",
    "run_drills",
]

CONFIG_NAME = "drills.yaml"
# A tiny model's job needs seconds; a day is beyond any wait a drill means.
MAX_TIMEOUT_S = 86400.0
RUNNERS: dict[str, Callable[[DrillContext], DrillResult]] = {
    "node-loss": node_loss.run,
    "disk-full": disk_full.run,
    "storage-revoked": storage_revoked.run,
    "gpu-delay": gpu_delay.run,
    "checkpoint-corrupt": checkpoint_corrupt.run,
}


class DrillConfig(BaseModel):
    """Schema of drills.yaml."""

    # strict: a number is a number (YAML's '120' is text, never read as 120).
    model_config = ConfigDict(extra="forbid", strict=True)

    version: Literal[1] = Field(default=1, description="Schema version of this file.")
    option: str | None = Field(
        default=None, description="Id of the option (contour) the drills exercise."
    )
    storage: str | None = Field(
        default=None,
        description="External checkpoint storage: a folder, s3://BUCKET/PREFIX, or `node` "
        "(the node's own disk); null: a folder under drills/.",
    )
    executor: Literal["local", "slurm"] = Field(default="local", description="local | slurm.")
    timeout_s: float = Field(
        default=120.0, gt=0, le=MAX_TIMEOUT_S, description="Longest wait for one job, seconds."
    )


@dataclass
class DrillRun:
    """What `run_drills` did: each drill's result and the record it wrote."""

    results: list[DrillResult]
    evidence: list[Path]
    option: str | None

    @property
    def passed(self) -> bool:
        """Whether every drill passed (the command's exit 0)."""
        return all(r.verdict == "pass" for r in self.results)

    def as_json(self, which: str) -> dict[str, Any] | list[dict[str, Any]]:
        """The `drill --json` output: one drill's object, or all of them under "drills"."""
        objs = [
            {**r.as_dict(), "option": self.option, "evidence": str(p)}
            for r, p in zip(self.results, self.evidence, strict=True)
        ]
        return {"drills": objs} if which == "all" else objs[0]


def load_config(
    ws: workspace.Workspace | None,
) -> tuple[DrillConfig, Path | None, yaml.Node | None]:
    """The workspace's drills.yaml (defaults when absent), its path and its YAML root (for
    the line of a field). Anything at that path but a regular file (a folder, a FIFO, a
    device) is refused, never read as "absent"."""
    if ws is None:
        return DrillConfig(), None, None
    path = ws.root / CONFIG_NAME
    if not path.exists() and not path.is_symlink():
        return DrillConfig(), None, None
    data, root = load_yaml(path)
    return validate_model(data, root, path, DrillConfig), path, root


def names(which: str) -> list[str]:
    """The drills `which` stands for (a name, or all)."""
    if which == "all":
        return list(DRILLS)
    if which not in DRILLS:
        raise InputError(
            "unknown drill {name!r}",
            field="NAME",
            hint="one of {choices}, all",
            name=which,
            choices=", ".join(DRILLS),
        )
    return [which]


EXECUTORS = ("local", "slurm")


def executor_of(given: str | None) -> Literal["local", "slurm"] | None:
    """The `--executor` asked for (None: drills.yaml's, else local)."""
    if given is not None and given not in EXECUTORS:
        raise InputError(
            "unknown executor {executor!r}", field="--executor", hint="local or slurm",
            executor=given,
        )  # fmt: skip
    return cast(Literal["local", "slurm"] | None, given)


def run_drills(
    which: str,
    *,
    ws: workspace.Workspace | None,
    storage: str | None = None,
    executor: str | None = None,
    option: str | None = None,
    evidence_dir: Path | None = None,
) -> DrillRun:
    """Run one drill or all; each writes its journal and a `drill` evidence record.

    Everything the drills need is checked before the first one starts (the option is
    declared, the executor answers): bad input writes nothing."""
    todo = names(which)
    chosen_executor = executor_of(executor)
    cfg, cfg_path, cfg_root = load_config(ws)
    chosen = option or cfg.option
    if chosen is not None and ws is not None:
        if option is None and cfg_path is not None:
            line = node_line(cfg_root, ("option",))
            require_known(chosen, ws.config.options, path=cfg_path, field="option", line=line)
        else:
            require_known(
                chosen, ws.config.options, path=ws.root / workspace.CONFIG_NAME, field="--option"
            )
    run_on = chosen_executor or cfg.executor
    cluster = ""
    if run_on == "slurm":
        answer = ask_slurm()
        if answer.name is None:
            if chosen_executor is None and cfg_path is not None:
                line = node_line(cfg_root, ("executor",))
                raise answer.error(field="executor", path=str(cfg_path), line=line)
            raise answer.error(field="--executor")
        cluster = answer.name
    store = _storage(storage, cfg, cfg_path, cfg_root, todo)
    root = ws.root if ws is not None else Path.cwd()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    ctx = DrillContext(
        root=root / "drills" / stamp,
        storage=store,
        executor=run_on,
        option=chosen,
        timeout_s=cfg.timeout_s,
        cluster=cluster,
        planned=list(todo),
    )
    out_dir = evidence_dir or (ws.evidence_dir if ws is not None else root / "evidence")
    if (out_dir.exists() and not out_dir.is_dir()) or not writable_folder(out_dir):
        # Known before the first drill: its record could not be kept.
        raise InputError(
            "the evidence folder cannot be written",
            path=out_dir,
            field="--evidence-dir" if evidence_dir is not None else None,
            hint="nothing runs before its record can be kept: give --evidence-dir a writable "
            "folder",
        )
    restarts, log_inputs = log_restarts(ws)
    results: list[DrillResult] = []
    written = []
    # Local jobs fork from one warm process: torch is imported once per game day, not per job.
    ctx.zygote = drill_zygote() if ctx.executor == "local" else None
    # SIGTERM and SIGHUP unwind the game day as Ctrl-C does: each drill's rollbacks (the
    # disk-full drill's unmount among them) run before the process ends.
    with stopped_by_signals():
        try:
            for name in todo:
                result = RUNNERS[name](ctx)
                result.details["lifecycle"] = job_lifecycles(result)
                results.append(result)
                # Every record carries the game day so far, for the report's summary; the
                # decision judges each record by its own drill.
                day = [runner.game_day_row(r) for r in results]
                record = runner.to_evidence(result, ctx, root, day, restarts)
                record.inputs.extend(log_inputs)
                written.append(ev.write(record, out_dir))
        finally:
            if ctx.zygote is not None:
                ctx.zygote.close()
    return DrillRun(results, written, chosen)


def job_lifecycles(result: DrillResult) -> list[dict[str, Any]]:
    """The drill's jobs as their own lifecycle marks tell it (`marks.lifecycle`)."""
    stopped = {
        job: datetime.fromisoformat(at.replace("Z", "+00:00"))
        for job, at in result.stopped_at.items()
    }
    run_dir = result.journal.parent
    found = lifecycles(run_dir / MARKS_FOLDER, f"{run_dir.name}-", stopped)
    return [j.model_dump(mode="json") for j in found]


def _storage(
    given: str | None,
    cfg: DrillConfig,
    cfg_path: Path | None,
    cfg_root: yaml.Node | None,
    todo: list[str],
) -> str | None:
    """The storage the drills use, checked (`storage_url.check`) and, on S3, asked once
    before any drill starts: the flag's, else drills.yaml's (named by its line)."""
    if given is not None:
        where: dict[str, Any] = {"field": "--storage"}
        chosen: str | None = given
    else:
        line = node_line(cfg_root, ("storage",)) if cfg_path is not None else None
        where = {"field": "storage", "path": cfg_path, "line": line}
        chosen = cfg.storage
    checked = storage_url.check(chosen, **where)
    # storage-revoked revokes access on a local S3 server of its own; every other drill
    # writes to the bucket itself.
    if checked is not None and checked.startswith("s3://") and set(todo) - {"storage-revoked"}:
        storage_url.probe_s3(checked, **where)
    return checked


def log_restarts(
    ws: workspace.Workspace | None,
) -> tuple[RestartsFigures | None, list[ev.InputRef]]:
    """Restarts from zero in the workspace's own job logs (None when it has none to read)."""
    if ws is None or not ws.config.logs or not all(p.is_file() for p in ws.log_paths()):
        return None, []
    try:
        loaded = workspace_logs(ws)
    except InputError:
        return None, []
    inputs = [ev.input_ref(p, ws.root) for p in loaded.paths]
    return RestartsFigures.model_validate(restarts_from_zero(loaded.log.attempts)), inputs
