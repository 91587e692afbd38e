"""The decision workspace: a folder a team keeps under version control (DESIGN: Workspace).

    gpudecide.yaml   what is being decided and how the team's logs are read
    logs/            job logs (sacct, CSV, JSONL)
    evidence/        one JSON record per analysis (written by gpudecide)
    report/          index.html, report.md, report.json (written by gpudecide)

Every input file has a schema here and a commented template under `templates/workspace/`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpudecide.author import AuthorName
from gpudecide.errors import InputError
from gpudecide.fsutil import atomic_write_text, open_regular
from gpudecide.inputs import load_yaml_model
from gpudecide.log_formats import LogFormat
from gpudecide.log_settings import ClassifyConfig, IanaZone, validate_rules
from gpudecide.matrix_config import MatrixConfig
from gpudecide.matrix_config import validate as validate_matrix
from gpudecide.options import OptionDecl, check_unique, require_known
from gpudecide.workspace_root import CONFIG_NAME, find_root

if TYPE_CHECKING:
    from gpudecide.scaffold import OptionSpec

__all__ = [
    "CONFIG_NAME",
    "LogSource",
    "ProfileConfig",
    "QueueConfig",
    "ReplayConfig",
    "ReportConfig",
    "Workspace",
    "WorkspaceConfig",
    "find_root",
    "init",
    "load",
    "template_files",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LogSource(_Strict):
    """One job log the analyses read."""

    path: str = Field(description="Path of the log, relative to the workspace.")
    format: LogFormat = Field(
        default="auto",
        description="auto | sacct | slurm-json | csv | jsonl | kubernetes | sagemaker | openai.",
    )
    sacct_format: str | None = Field(
        default=None, description="The --format list given to sacct, for output without a header."
    )
    option: str | None = Field(
        default=None,
        description="The option whose platform the log comes from (its scheduler, or a "
        "managed vendor's job events): its queue measures that option's start time (Q1, Q3); "
        "null: the team's workload, not one option's.",
    )


class ProfileConfig(_Strict):
    """Defaults of `gpudecide profile`."""

    weeks: int = Field(default=8, ge=1, le=520, description="Weeks of log to profile (SPEC F1).")
    pool_gpus: int | None = Field(
        default=None, ge=1, description="Size of the dedicated pool to compare against (C2)."
    )


class QueueConfig(_Strict):
    """Inputs of `gpudecide queue` (SPEC Q1-Q5)."""

    slo: str | None = Field(
        default=None, description="SLO file (normal and urgent SLOs), relative to the workspace."
    )
    chain_pattern: str | None = Field(
        default=None,
        description="Regex with a named group `chain` read from job names (Q5); null: labels only.",
    )


class ReplayConfig(_Strict):
    """Defaults of `gpudecide replay` (SPEC C8, D3)."""

    gpus: str = Field(default="auto", description="Pool sizes to try (8,16,32) or auto.")
    policy: Literal["fifo", "backfill", "priority"] = Field(
        default="fifo", description="fifo | backfill | priority."
    )
    slo: str = Field(default="normal", description="Name of the SLO a pool must meet.")
    window: Literal["full", "peak"] = Field(
        default="full", description="full log, or the busiest 4 weeks (peak month, C8)."
    )
    checkpoint_minutes: float | None = Field(
        default=None, gt=0, description="Checkpoint interval assumed when preempting."
    )


class ReportConfig(_Strict):
    """How the report is written."""

    language: Literal["en", "ru", "kk"] = Field(
        default="en",
        description="Language of the report and of what commands print: en, ru or kk "
        "(--lang or GPUDECIDE_LANG override it).",
    )


class WorkspaceConfig(_Strict):
    """Schema of gpudecide.yaml."""

    version: Literal[1] = Field(default=1, description="Schema version of this file.")
    team: str = Field(default="", description="Who is deciding; shown on the report.")
    author: AuthorName = Field(
        default="",
        description="Who produces this workspace's evidence, as every record names it "
        "(--author overrides it); empty: git's user.name and user.email, else the OS user.",
    )
    decision: str = Field(
        default="Where to fine-tune: dedicated GPUs, a managed endpoint or a hybrid",
        description="The question the report answers.",
    )
    timezone: IanaZone = Field(
        default="UTC", description="IANA time zone the scheduler printed times in."
    )
    options: list[OptionDecl] = Field(
        default_factory=list,
        description="The options compared, each with its id and sites (SPEC D3, I7).",
    )
    logs: list[LogSource] = Field(default_factory=list, description="Job logs to analyse.")
    profile: ProfileConfig = Field(default_factory=ProfileConfig, description="Profile options.")
    classify: ClassifyConfig = Field(default_factory=ClassifyConfig, description="Job-kind rules.")
    queue: QueueConfig = Field(default_factory=QueueConfig, description="Queue analysis inputs.")
    replay: ReplayConfig = Field(default_factory=ReplayConfig, description="Replay defaults.")
    report: ReportConfig = Field(default_factory=ReportConfig, description="Report options.")
    matrix: MatrixConfig = Field(
        default_factory=MatrixConfig, description="Decision matrix: criteria, weights, scores."
    )


@dataclass
class Workspace:
    """A loaded workspace: its root and validated configuration."""

    root: Path
    config: WorkspaceConfig

    @property
    def evidence_dir(self) -> Path:
        """Where analyses write their records."""
        return self.root / "evidence"

    @property
    def report_dir(self) -> Path:
        """Where the report is written."""
        return self.root / "report"

    def option(self, option_id: str) -> OptionDecl | None:
        """The declared option with this id, if any."""
        return next((o for o in self.config.options if o.id == option_id), None)

    def log_paths(self) -> list[Path]:
        """Configured logs, resolved against the workspace root."""
        return [self.root / src.path for src in self.config.logs]


def load(root: Path) -> Workspace:
    """Load and validate a workspace."""
    path = root / CONFIG_NAME
    if not os.path.lexists(path):
        raise InputError(
            f"no {CONFIG_NAME} here", path=root, hint="create one with `gpudecide init DIR`"
        )
    config = load_yaml_model(path, WorkspaceConfig)
    check_unique(config.options, path)
    for i, src in enumerate(config.logs):
        if src.option is not None:
            require_known(src.option, config.options, path=path, field=f"logs.{i}.option")
    validate_matrix(config.matrix, [o.id for o in config.options], path)
    validate_rules(config.classify.extra_rules, str(path), "classify.extra_rules")
    validate_rules(config.classify.rules or [], str(path), "classify.rules")
    return Workspace(root=root, config=config)


def template_files() -> dict[str, str]:
    """Relative path -> text of every file `init` writes."""
    base = resources.files("gpudecide") / "templates" / "workspace"
    out: dict[str, str] = {}

    def walk(node: resources.abc.Traversable, prefix: str) -> None:
        for child in node.iterdir():
            rel = f"{prefix}{child.name}"
            if child.is_dir():
                walk(child, rel + "/")
            else:
                out[rel] = child.read_text(encoding="utf-8")

    walk(base, "")
    return out


def _is_ours(target: Path, text: str) -> bool:
    """Whether a file already holds exactly the template text (left by an interrupted init)."""
    try:
        with open_regular(target) as handle:
            return handle.read(len(text.encode("utf-8")) + 1) == text.encode("utf-8")
    except InputError:
        return False


def _check_parents(root: Path) -> None:
    for parent in (root, *root.parents):
        if os.path.lexists(parent):
            if not parent.is_dir():
                raise InputError(
                    "is a file, not a folder" if parent == root else f"{parent} is a file",
                    path=root,
                    hint="choose a folder whose parents are folders",
                )
            return


def init(root: Path, *, force: bool = False, options: Sequence[OptionSpec] = ()) -> list[Path]:
    """Write the commented template workspace; refuses to overwrite unless `force`.

    With `options`, every file that names options is written for those ids and kinds
    (`gpudecide.scaffold`), so the team names each option once.

    Every file is written atomically (never a 0-byte or half file, even on a full disk). When
    some template files are missing (an init interrupted by a full disk or a kill), the ones
    already there holding exactly the template text are not clashes, so the run can simply
    be repeated (issue 14 item 12); a complete workspace is never overwritten without force.
    """
    _check_parents(root)
    files = template_files()
    if options:
        from gpudecide.scaffold import for_options  # ruamel.yaml only when asked

        files = for_options(files, list(options))
    present = [rel for rel in files if os.path.lexists(root / rel)]
    if not force:
        interrupted = len(present) < len(files)
        clashes = [rel for rel in present if not (interrupted and _is_ours(root / rel, files[rel]))]
        if clashes:
            raise InputError(
                f"would overwrite {', '.join(sorted(clashes))}",
                path=root,
                hint="pick an empty directory or pass --force",
            )
    written: list[Path] = []
    for rel, text in sorted(files.items()):
        target = root / rel
        atomic_write_text(target, text)
        written.append(target)
    for sub in ("logs", "evidence", "report"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    return written
